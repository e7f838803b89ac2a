// Part 5 of `npm run bench:pipeline` (bench/pipeline/run.ts): the 09:00 wave. 20,000 daily rules
// (one member each, 5 pending matches each) fall due at the same moment; the scheduler's next
// tick asks for every period, and the deliver and send roles turn them into 20,000 e-mails:
// e-mails/s from the moment they fall due to the last accept, vs nodemailer's pooled transport
// sending 20,000 pre-rendered digests of 5 events to the same sink. CPU seconds per 1,000
// e-mails of our process, PostgreSQL and Redis beside it.

import { performance } from 'node:perf_hooks';
import { mulberry32, numberFromEnv, round } from '../support/common';
import { MAIL_COMPOSE_THREADS, MAIL_CONCURRENCY, rawMailRate, SMTP_MAX_CONNECTIONS } from '../support/mail-baseline';
import { acceptedOrTimedOut, deliveryCounts, newSchema, processEnv, stopChild } from '../support/pipeline';
import { cpuMeter, cpuPerThousandEmails } from '../support/proc';
import { Resources, startSink } from '../support/processes';
import { log, ratioMeasure, seconds, type PartReport } from '../support/report';
import { seedDigestRules } from '../support/seed';

const WAVE_RULES = numberFromEnv('BENCH_WAVE_RULES', 20_000);
const WAVE_EVENTS = numberFromEnv('BENCH_WAVE_EVENTS', 5);

export async function run(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(5);
  const seedStart = performance.now();
  // Not due until the server is up: then one statement makes every period due at once.
  const later = new Date(Date.now() + 7 * 24 * 3600 * 1000);
  const { rules, matches } = await seedDigestRules(db.pool, {
    rules: WAVE_RULES, eventsPerRule: WAVE_EVENTS, periodKey: '20261125T090000Z', dueAt: later, label: 'Wave', random, frequency: () => 'daily',
  });
  log(`seeded ${rules.length} daily rules (1 member each), ${matches} pending matches in ${seconds(performance.now() - seedStart)}`);

  const sink = await startSink();
  res.onRelease(() => sink.close());
  const raw = () => rawMailRate(res, sink, rules.length, { kind: 'digest', events: WAVE_EVENTS });

  const before = await raw();
  const server = await res.child('wave-all-roles', processEnv(schema, res.prefix(), { SMTP_URL: sink.url }));
  sink.reset();
  const connectionsBefore = sink.connections;
  const accepted = sink.waitFor(rules.length, 900_000);
  const cpuSince = await cpuMeter(server.pid);
  const start = performance.now();
  await db.pool.query(`UPDATE matches SET due_at = now() - interval '1 second' WHERE status = 'pending'`);
  const { end, timedOut } = await acceptedOrTimedOut(accepted, log);
  const cpu = await cpuSince(sink.accepted, 1000);
  const elapsed = end - start;
  const rate = sink.accepted / (elapsed / 1000);
  const bytesPerEmail = sink.bytesPerMessage();
  log(`due → e-mails: ${round(rate)} e-mails/s (${seconds(elapsed)}) of ${bytesPerEmail} bytes; ${cpuPerThousandEmails(cpu)}`);
  const connections = sink.connections - connectionsBefore;
  await stopChild(res, server);
  const { byStatus, created, sent } = await deliveryCounts(db);
  const { rows: left } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`);

  const after = await raw();
  const ok = !timedOut && created === rules.length && sent === rules.length && left[0]!.n === 0;
  if (!ok) log(`CHECK FAILED: ${created} deliveries (${sent} sent); ${left[0]!.n} matches still pending`);
  return {
    measures: { wave: ratioMeasure('09:00 wave (due → accept)', 'e-mails/s', rate, [before.rate, after.rate], 0.8, ok) },
    details: {
      rules: rules.length,
      events_per_email: WAVE_EVENTS,
      seconds: round(elapsed / 1000, 3),
      cpu_seconds_per_1000_emails: cpu,
      bytes_per_email: { ours: bytesPerEmail, baseline: [before.bytesPerEmail, after.bytesPerEmail] },
      deliveries_by_status: byStatus,
      pending_matches_after: left[0]!.n,
      smtp_connections_opened: connections,
      server: `child process, all roles, defaults: MAIL_CONCURRENCY ${MAIL_CONCURRENCY}, SMTP_MAX_CONNECTIONS ${SMTP_MAX_CONNECTIONS}, MAIL_COMPOSE_THREADS ${MAIL_COMPOSE_THREADS}, DATABASE_POOL_SIZE 10, SCHEDULE_TICK_MS default`,
      measured_from: 'the statement that makes every seeded period due (the server up and idle) to the last accept; includes up to one scheduler tick',
      baseline: `nodemailer pooled transport in a child process (maxConnections ${SMTP_MAX_CONNECTIONS}), ${rules.length} copies of one digest of ${WAVE_EVENTS} events rendered once (events made as the part seeds its own; bytes_per_email has both sizes), ${MAIL_CONCURRENCY} in flight`,
    },
  };
}
