// Part 4 of `npm run bench:pipeline` (bench/pipeline/run.ts): 5,000 rule flushes of 100,000 pending
// matches → 5,000 e-mails accepted, vs nodemailer's pooled transport sending 5,000 similar
// messages.
//
// BENCH_DIGEST_WARMUP=<n> (default 0) first flushes n more rules of the same kind, untimed, and
// has the raw baseline send n e-mails untimed before each of its measures: both then measured with
// their JIT warm (a diagnostic: in the cold run V8's optimizing compiler, on threads of its own,
// took about 0.35 ms of our CPU per e-mail, the raw client's about 0.18; the ratio moved with
// neither, pipeline-issue-11.md, twenty-first round).

import { performance } from 'node:perf_hooks';
import { mulberry32, numberFromEnv, pooled, round } from '../support/common';
import { acceptedOrTimedOut, ADMIN_TOKEN, deliveryCounts, newSchema, postJson, processEnv, stopChild } from '../support/pipeline';
import { MAIL_COMPOSE_THREADS, MAIL_CONCURRENCY, rawMailRate, SMTP_MAX_CONNECTIONS } from '../support/mail-baseline';
import { cpuMeter, cpuPerThousandEmails } from '../support/proc';
import { Resources, startSink } from '../support/processes';
import { log, ratioMeasure, seconds, type PartReport } from '../support/report';
import { seedDigestRules } from '../support/seed';

const DIGEST_RULES = numberFromEnv('BENCH_DIGEST_RULES', 5000);
const DIGEST_MATCHES = numberFromEnv('BENCH_DIGEST_MATCHES', 100_000);
const FLUSH_CONCURRENCY = numberFromEnv('BENCH_FLUSH_CONCURRENCY', 10);
const WARMUP_RULES = numberFromEnv('BENCH_DIGEST_WARMUP', 0);

export async function run(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(4);
  const perRule = Math.round(DIGEST_MATCHES / DIGEST_RULES);
  const seedStart = performance.now();
  const dueAt = new Date(Date.now() + 7 * 24 * 3600 * 1000);
  const { rules: seeded, matches } = await seedDigestRules(db.pool, {
    rules: DIGEST_RULES + WARMUP_RULES, eventsPerRule: perRule, periodKey: 'seeded', dueAt, label: 'Digest', random,
    frequency: () => (random() < 0.6 ? 'daily' : 'weekly'),
  });
  const warmupRules = seeded.slice(0, WARMUP_RULES);
  const rules = seeded.slice(WARMUP_RULES);
  log(`seeded ${seeded.length} digest rules (1 member each), ${matches} pending matches in ${seconds(performance.now() - seedStart)}`);

  const sink = await startSink();
  res.onRelease(() => sink.close());

  const raw = () => rawMailRate(res, sink, rules.length, { kind: 'digest', events: perRule }, warmupRules.length);

  const before = await raw();
  const prefix = res.prefix();
  const server = await res.child('digests-all-roles', processEnv(schema, prefix, { SMTP_URL: sink.url }));
  const base = `http://127.0.0.1:${server.ready.port}`;
  let flushedMatches = 0;
  let flushedDeliveries = 0;
  const flush = async (ruleId: string) => {
    const { status, json } = await postJson(`${base}/admin/v1/notification-rules/${ruleId}/flush`, ADMIN_TOKEN, undefined);
    if (status !== 202) throw new Error(`flush answered ${status}: ${JSON.stringify(json)}`);
    flushedMatches += json.matches as number;
    flushedDeliveries += json.deliveries as number;
  };
  if (warmupRules.length) {
    sink.reset();
    const warmedUp = sink.waitFor(warmupRules.length, 400_000);
    const warmupStart = performance.now();
    await pooled(warmupRules.length, FLUSH_CONCURRENCY, (k) => flush(warmupRules[k]!.id));
    log(`warm-up: ${warmupRules.length} flushes → e-mails at ${round(warmupRules.length / (((await warmedUp) - warmupStart) / 1000))} e-mails/s`);
  }
  sink.reset();
  const connectionsBefore = sink.connections;
  const accepted = sink.waitFor(rules.length, 400_000);
  const cpuSince = await cpuMeter(server.pid);
  const start = performance.now();
  await pooled(rules.length, FLUSH_CONCURRENCY, (k) => flush(rules[k]!.id));
  const flushedAt = performance.now();
  log(`${rules.length} flushes answered in ${seconds(flushedAt - start)} (${sink.accepted} e-mails accepted by then)`);
  const { end, timedOut } = await acceptedOrTimedOut(accepted, log);
  const cpu = await cpuSince(sink.accepted, 1000);
  const elapsed = end - start;
  const rate = sink.accepted / (elapsed / 1000);
  const bytesPerEmail = sink.bytesPerMessage();
  log(`flush → e-mails: ${round(rate)} e-mails/s (${seconds(elapsed)}) of ${bytesPerEmail} bytes; ${cpuPerThousandEmails(cpu)}`);
  const connections = sink.connections - connectionsBefore;
  await stopChild(res, server);
  const { byStatus, created, sent } = await deliveryCounts(db);
  const { rows: left } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`);

  const after = await raw();
  // A flush answers with the deliveries its own transaction made; when the scheduler's digest job for the
  // flushed period (due now) gets there first, the e-mail still goes once but the answer says 0.
  const ok = !timedOut && flushedMatches === matches && created === seeded.length && sent === seeded.length && left[0]!.n === 0;
  if (!ok) log(`CHECK FAILED: flushed ${flushedMatches} matches, ${created} deliveries (${sent} sent); ${left[0]!.n} matches still pending`);
  if (flushedDeliveries !== created) log(`note: the flush answers counted ${flushedDeliveries} deliveries, the database has ${created} (the scheduler made the others)`);
  return {
    measures: { digests: ratioMeasure('digests (flush → accept)', 'e-mails/s', rate, [before.rate, after.rate], 0.8, ok) },
    details: {
      rules: rules.length,
      warmup_rules: warmupRules.length,
      matches,
      events_per_email: perRule,
      flush_concurrency: FLUSH_CONCURRENCY,
      flush_seconds: round((flushedAt - start) / 1000, 3),
      seconds: round(elapsed / 1000, 3),
      cpu_seconds_per_1000_emails: cpu,
      bytes_per_email: { ours: bytesPerEmail, baseline: [before.bytesPerEmail, after.bytesPerEmail] },
      flushed_matches: flushedMatches,
      deliveries_created: created,
      deliveries_in_flush_answers: flushedDeliveries,
      deliveries_by_status: byStatus,
      pending_matches_after: left[0]!.n,
      smtp_connections_opened: connections,
      server: `child process, all roles, defaults: MAIL_CONCURRENCY ${MAIL_CONCURRENCY}, SMTP_MAX_CONNECTIONS ${SMTP_MAX_CONNECTIONS}, MAIL_COMPOSE_THREADS ${MAIL_COMPOSE_THREADS}, DATABASE_POOL_SIZE 10; flushes over HTTP (POST /admin/v1/notification-rules/{id}/flush), ${FLUSH_CONCURRENCY} at a time`,
      baseline: `nodemailer pooled transport in a child process (maxConnections ${SMTP_MAX_CONNECTIONS}, other options as @notify/mail's), ${rules.length} copies of one digest of ${perRule} events rendered once by the real renderer (events made as the part seeds its own; bytes_per_email has both sizes), ${MAIL_CONCURRENCY} in flight, from "go" to the last accept`,
    },
  };
}
