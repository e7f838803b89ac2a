// Part 5 of `npm run bench:pipeline` (bench/pipeline/run.ts): retention. One month of history,
// 1,000,000 events and a match each, goes past RETENTION_DAYS and is dropped by the partition
// (what the schedule role does); the baseline is a DELETE of another month of the same size, what
// retention would cost without partitions. Both on the same connection, so the PostgreSQL backend's
// CPU is measured beside the wall time.

import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { numberFromEnv, round } from '../support/common';
import { dropExpiredHistory, ensureHistoryPartitions } from '../support/notify';
import { newSchema } from '../support/pipeline';
import { cpuSeconds } from '../support/proc';
import { Resources } from '../support/processes';
import { log, ratioMeasure, seconds, type PartReport } from '../support/report';

const EVENTS_PER_MONTH = numberFromEnv('BENCH_RETENTION_EVENTS', 1_000_000);
/** Two months long past any retention: the first is dropped, the second deleted row by row. */
const DROPPED = new Date('2025-05-01T00:00:00Z');
const DELETED = new Date('2025-06-01T00:00:00Z');

export async function run(res: Resources): Promise<PartReport> {
  // One connection: every statement below runs on the same PostgreSQL backend.
  const { db } = await newSchema(res, 1);
  const org = randomUUID();
  const rule = randomUUID();
  await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'retention bench')`, [org]);
  await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, 'r', 'asset_dns_changed', 'daily', 9)`, [rule, org]);
  await ensureHistoryPartitions(db, DROPPED, 1);

  const loadStart = performance.now();
  for (const month of [DROPPED, DELETED]) {
    const prefix = month.toISOString().slice(0, 7);
    // Spread over the month, matched, each with a delivered match: history that owes nothing.
    await db.pool.query(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, data, received_at, matched_at)
       SELECT $1, $2 || '-' || g, 'asset_dns_changed', t, 'host-' || (g % 20000) || '.example.com', 'domain', 'low', ARRAY['production'],
              'DNS record changed on host-' || (g % 20000), jsonb_build_object('record', 'A', 'value', '192.0.2.' || (g % 250)), t, t
         FROM generate_series(1, $3::int) g, LATERAL (SELECT $4::timestamptz + (g * interval '2 seconds') AS t) x`,
      [org, prefix, EVENTS_PER_MONTH, month],
    );
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status)
       SELECT $1, organization_id, id, received_at, 'p', received_at, 'delivered' FROM events
        WHERE received_at >= $2 AND received_at < $2::timestamptz + interval '1 month'`,
      [rule, month],
    );
  }
  await db.pool.query('VACUUM ANALYZE events, matches');
  log(`loaded 2 months × ${EVENTS_PER_MONTH.toLocaleString('en')} events and their matches in ${seconds(performance.now() - loadStart)}`);

  const backend = (await db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const timed = async (work: () => Promise<unknown>) => {
    const cpuBefore = await cpuSeconds(backend);
    const start = performance.now();
    await work();
    const ms = performance.now() - start;
    return { ms, cpu: (await cpuSeconds(backend)) - cpuBefore };
  };

  // Retention as the schedule role runs it: the May partitions go, whole.
  const drop = await timed(async () => {
    const result = await dropExpiredHistory(db, DELETED);
    if (result.dropped.join() !== '2025-05') throw new Error(`expected May 2025 dropped, got ${JSON.stringify(result)}`);
  });
  log(`drop of a month (${EVENTS_PER_MONTH.toLocaleString('en')} events + matches): ${round(drop.ms)} ms, backend CPU ${round(drop.cpu, 2)} s`);
  // The baseline: the same amount of history deleted row by row (no partitions to drop).
  const deleted = await timed(async () => {
    await db.pool.query('BEGIN');
    await db.pool.query(`DELETE FROM matches WHERE event_received_at >= $1 AND event_received_at < $1::timestamptz + interval '1 month'`, [DELETED]);
    await db.pool.query(`DELETE FROM events WHERE received_at >= $1 AND received_at < $1::timestamptz + interval '1 month'`, [DELETED]);
    await db.pool.query('COMMIT');
  });
  // What a DELETE leaves behind: dead rows, for VACUUM to read and reclaim.
  const vacuumed = await timed(() => db.pool.query('VACUUM events, matches'));
  log(`DELETE of a month of the same size: ${seconds(deleted.ms)}, backend CPU ${round(deleted.cpu, 2)} s; its VACUUM ${seconds(vacuumed.ms)}, CPU ${round(vacuumed.cpu, 2)} s`);

  return {
    measures: {
      // Months retired per second, against DELETE + VACUUM of a month: how much cheaper the drop is.
      retention_drop: ratioMeasure('retention: a month (1M events) retired', 'months/s', 1000 / drop.ms, [1000 / (deleted.ms + vacuumed.ms)], 5),
    },
    details: {
      events_per_month: EVENTS_PER_MONTH,
      matches_per_month: EVENTS_PER_MONTH,
      drop_ms: round(drop.ms, 1),
      drop_backend_cpu_s: round(drop.cpu, 3),
      delete_ms: round(deleted.ms, 1),
      delete_backend_cpu_s: round(deleted.cpu, 3),
      vacuum_after_delete_ms: round(vacuumed.ms, 1),
      vacuum_after_delete_backend_cpu_s: round(vacuumed.cpu, 3),
      baseline: 'DELETE of another month of the same size (events and matches) in one transaction, then VACUUM of both tables, on the same connection',
    },
  };
}
