// Part 3b of `npm run bench:pipeline` (bench/pipeline/run.ts): one-event e-mails at the speed of
// the SMTP server. 20,000 events in 40 requests of 500, each event the first match of its own
// instant rule (one member each), so 20,000 e-mails: e-mails/s from the first ingest request to the
// last SMTP accept, vs nodemailer's pooled transport sending 20,000 pre-rendered one-event e-mails
// to the same sink. CPU seconds per 1,000 e-mails of ours, PostgreSQL and Redis beside it.

import { performance } from 'node:perf_hooks';
import { mulberry32, numberFromEnv, pooled, round } from '../support/common';
import { MAIL_COMPOSE_THREADS, MAIL_CONCURRENCY, rawMailRate, SMTP_MAX_CONNECTIONS } from '../support/mail-baseline';
import { SCOPES } from '../support/notify';
import { acceptedOrTimedOut, deliveryCounts, INGEST_TOKEN, newSchema, postJson, processEnv, stopChild } from '../support/pipeline';
import { cpuMeter, cpuPerThousandEmails } from '../support/proc';
import { Resources, startSink } from '../support/processes';
import { log, ratioMeasure, seconds, type PartReport } from '../support/report';
import { seedInstantRules, wireEvent } from '../support/seed';

const BURST_EVENTS = numberFromEnv('BENCH_BURST_EVENTS', 20_000);
const BURST_BATCH = 500;
/** Requests in flight at once, as a scanner's sweep would post them. */
const BURST_REQUESTS_AT_ONCE = 4;

export async function run(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(6);
  const seedStart = performance.now();
  const { orgs, rules } = await seedInstantRules(db.pool, { rules: BURST_EVENTS, label: 'Burst', random });
  log(`seeded ${orgs.length} organizations, ${rules.length} instant rules with one member each in ${seconds(performance.now() - seedStart)}`);
  const events = Array.from({ length: BURST_EVENTS }, (_, k) =>
    wireEvent(random, `burst-${k}`, orgs[Math.floor(k / SCOPES.length)]!.id, SCOPES[k % SCOPES.length]!, Math.floor(k / SCOPES.length)),
  );

  const sink = await startSink();
  res.onRelease(() => sink.close());
  const raw = () => rawMailRate(res, sink, BURST_EVENTS, { kind: 'instant', events: 1 });
  const before = await raw();

  const server = await res.child('burst-all-roles', processEnv(schema, res.prefix(), { SMTP_URL: sink.url }));
  const url = `http://127.0.0.1:${server.ready.port}/v1/ingest/events`;
  sink.reset();
  const accepted = sink.waitFor(BURST_EVENTS, 900_000);
  const cpuSince = await cpuMeter(server.pid);
  const start = performance.now();
  const requests = Math.ceil(BURST_EVENTS / BURST_BATCH);
  let refused = 0;
  await pooled(requests, BURST_REQUESTS_AT_ONCE, async (r) => {
    const { status, json } = await postJson(url, INGEST_TOKEN, JSON.stringify({ events: events.slice(r * BURST_BATCH, (r + 1) * BURST_BATCH) }));
    if (status !== 202 || json.accepted !== Math.min(BURST_BATCH, BURST_EVENTS - r * BURST_BATCH)) refused++;
  });
  const ingestedAt = performance.now();
  const { end, timedOut } = await acceptedOrTimedOut(accepted, log);
  const cpu = await cpuSince(sink.accepted, 1000);
  const elapsed = end - start;
  const rate = sink.accepted / (elapsed / 1000);
  const bytesPerEmail = sink.bytesPerMessage();
  log(`${requests} requests answered in ${seconds(ingestedAt - start)}; first request → last accept: ${round(rate)} e-mails/s (${seconds(elapsed)}) of ${bytesPerEmail} bytes; ${cpuPerThousandEmails(cpu)}`);
  await stopChild(res, server);
  const { byStatus, sent } = await deliveryCounts(db);
  const after = await raw();
  const ok = !timedOut && refused === 0 && sent === BURST_EVENTS;
  if (!ok) log(`CHECK FAILED: ${refused} requests refused, ${sent} deliveries sent of ${BURST_EVENTS}`);
  return {
    measures: { burst: ratioMeasure('one-event e-mails (first request → last accept)', 'e-mails/s', rate, [before.rate, after.rate], 0.8, ok) },
    details: {
      events: BURST_EVENTS,
      requests,
      events_per_request: BURST_BATCH,
      requests_at_once: BURST_REQUESTS_AT_ONCE,
      ingest_seconds: round((ingestedAt - start) / 1000, 3),
      seconds: round(elapsed / 1000, 3),
      cpu_seconds_per_1000_emails: cpu,
      bytes_per_email: { ours: bytesPerEmail, baseline: [before.bytesPerEmail, after.bytesPerEmail] },
      deliveries_by_status: byStatus,
      server: `child process, all roles, defaults: MAIL_CONCURRENCY ${MAIL_CONCURRENCY}, SMTP_MAX_CONNECTIONS ${SMTP_MAX_CONNECTIONS}, MAIL_COMPOSE_THREADS ${MAIL_COMPOSE_THREADS}, DATABASE_POOL_SIZE 10`,
      baseline: `nodemailer pooled transport in a child process (maxConnections ${SMTP_MAX_CONNECTIONS}), ${BURST_EVENTS} copies of one instant alert rendered once (an event made as the part makes its own; bytes_per_email has both sizes), ${MAIL_CONCURRENCY} in flight`,
    },
  };
}
