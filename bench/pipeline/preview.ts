// Part 6 of `npm run bench:pipeline` (bench/pipeline/run.ts): rule preview. An organization with
// 1,000,000 stored events over the last 30 days, spread over the 21 scopes, and another whose
// 1,000,000 are all of one scope (the worst case: every event is read and judged); each preview
// (POST /v1/platform/notification-rules/preview's work, rendering included) is timed five times,
// with its own CPU and its PostgreSQL backends' (one a slice it reads at once). Target: a few
// hundred milliseconds (<= 500 ms).

import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { numberFromEnv, round } from '../support/common';
import { createMailRenderer, PREVIEW_SLICES, previewRule, SCOPES, type PreviewedRule } from '../support/notify';
import { newSchema } from '../support/pipeline';
import { cpuSeconds } from '../support/proc';
import { Resources } from '../support/processes';
import { limitMeasure, log, type Measure, type PartReport } from '../support/report';

const EVENTS = numberFromEnv('BENCH_PREVIEW_EVENTS', 1_000_000);
const ROUNDS = 5;
const TARGET_MS = 500;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(res: Resources): Promise<PartReport> {
  // As many connections as a preview reads slices at once: their backends' CPU is the preview's.
  const { db } = await newSchema(res, PREVIEW_SLICES);
  const now = new Date();
  const spread = randomUUID();
  const single = randomUUID();
  const member = randomUUID();
  for (const org of [spread, single]) await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'preview bench')`, [org]);
  await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $2, 'member@preview.example')`, [member, spread]);
  const loadStart = performance.now();
  for (const [org, scopes] of [[spread, SCOPES], [single, ['new_open_port_detected']]] as const) {
    // Over the last 30 days, a severity and a data field each: what strategies read.
    await db.pool.query(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, data, received_at, matched_at)
       SELECT $1, 'e-' || g, ($2::text[])[1 + g % cardinality($2::text[])]::scope, t, 'host-' || (g % 20000) || '.example.com', 'domain',
              (ARRAY['info','low','medium','high','critical'])[1 + g % 5], ARRAY['production'], 'Finding ' || (g % 50000) || ' on host-' || (g % 20000),
              jsonb_build_object('port', 1 + g % 1000, 'service', 'svc-' || (g % 40)), t, t
         FROM generate_series(1, $3::int) g, LATERAL (SELECT $4::timestamptz - (g * (interval '30 days' / $3::int)) AS t) x`,
      [org, scopes, EVENTS, now],
    );
  }
  await db.pool.query('VACUUM ANALYZE events');
  log(`loaded 2 organizations × ${EVENTS.toLocaleString('en')} events in ${round((performance.now() - loadStart) / 1000, 1)} s`);

  // Every connection opened at once (each query holds one while it sleeps).
  const backends = (await Promise.all(Array.from({ length: PREVIEW_SLICES }, () => db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')))).map((r) => r.rows[0]!.pid);
  const backendCpu = async () => (await Promise.all(backends.map((pid) => cpuSeconds(pid)))).reduce((a, b) => a + b, 0);
  // The sample's renderer, compiled on first use (as the API's lazyMailRenderer does).
  let renderer: ReturnType<typeof createMailRenderer> | undefined;
  const ctx = { db, instantCoalesceMs: 5000, now: () => now, renderer: () => (renderer ??= createMailRenderer()) };
  const members = [{ id: member, email: 'member@preview.example', name: null }];
  const base = { name: 'Preview', scope: 'new_open_port_detected' as const, deliveryHour: 9, deliveryDayOfWeek: null, renotifyAfterHours: null, strategy: null, members };
  const cases: Array<{ name: string; org: string; rule: PreviewedRule }> = [
    { name: 'spread, daily, no strategy', org: spread, rule: { ...base, frequency: 'daily' } },
    { name: 'spread, instant, severity >= high and data.port <= 100', org: spread, rule: { ...base, frequency: 'instant', deliveryHour: null, strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }, { name: 'data.port', type: 'lte', value: 100 }], should: [], must_not: [] } } },
    { name: 'spread, weekly, renotify 24 h', org: spread, rule: { ...base, frequency: 'weekly', deliveryDayOfWeek: 0, renotifyAfterHours: 24 } },
    { name: 'one scope, daily, no strategy', org: single, rule: { ...base, frequency: 'daily' } },
    { name: 'one scope, instant, severity >= high and data.port <= 100', org: single, rule: { ...base, frequency: 'instant', deliveryHour: null, strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }, { name: 'data.port', type: 'lte', value: 100 }], should: [], must_not: [] } } },
  ];
  // The templates compile once per process: not part of any preview below.
  await previewRule(ctx, { id: spread, name: 'Bench', timezone: 'Europe/Paris' }, cases[0]!.rule, 1);

  const results: Array<Record<string, unknown>> = [];
  const measures: Record<string, Measure> = {};
  for (const { name, org, rule } of cases) {
    const runs: Array<{ ms: number; nodeCpu: number; pgCpu: number; matched: number; emails: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const pgBefore = await backendCpu();
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      const preview = await previewRule(ctx, { id: org, name: 'Bench', timezone: 'Europe/Paris' }, rule, 30);
      const ms = performance.now() - start;
      const cpu = process.cpuUsage(cpuBefore);
      runs.push({ ms, nodeCpu: (cpu.user + cpu.system) / 1e6, pgCpu: (await backendCpu()) - pgBefore, matched: preview.matchedEvents, emails: preview.emails });
    }
    const scanned = (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE organization_id = $1 AND scope = $2 AND received_at >= $3`, [org, rule.scope, new Date(now.getTime() - 30 * 86_400_000)])).rows[0]!.n;
    const ms = median(runs.map((r) => r.ms));
    log(`${name}: ${scanned.toLocaleString('en')} events of the scope read, ${runs[0]!.matched.toLocaleString('en')} matched, ${runs[0]!.emails} e-mails: median ${round(ms)} ms (runs ${runs.map((r) => round(r.ms)).join(', ')}); CPU node ${round(median(runs.map((r) => r.nodeCpu)), 3)} s, PostgreSQL ${round(median(runs.map((r) => r.pgCpu)), 3)} s`);
    results.push({
      case: name, events_of_organization: EVENTS, events_read: scanned, matched: runs[0]!.matched, emails: runs[0]!.emails,
      median_ms: round(ms, 1), runs_ms: runs.map((r) => round(r.ms, 1)),
      node_cpu_s: round(median(runs.map((r) => r.nodeCpu)), 3), postgres_cpu_s: round(median(runs.map((r) => r.pgCpu)), 3),
      cpu_us_per_event_read: round(((median(runs.map((r) => r.nodeCpu)) + median(runs.map((r) => r.pgCpu))) * 1e6) / Math.max(1, scanned), 2),
    });
    if (name.startsWith('spread')) {
      measures[`preview_${Object.keys(measures).length + 1}`] = limitMeasure(`preview over 1M stored events: ${name}`, 'ms', ms, TARGET_MS);
    }
  }
  return { measures, details: { organization_events: EVENTS, days: 30, rounds: ROUNDS, cases: results } };
}
