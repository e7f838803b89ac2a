// `npm run bench:api`: the HTTP API under load, with an organization of 10,000 rules.
//
// The server runs in a child process (bench/api-server.ts) on a fresh schema
// bench_<random>; this process seeds it, drives it with autocannon and compares every
// scenario with a bare Fastify route measured in the same run (first and last, the
// mean is the baseline), because the machine is shared and absolute numbers drift.
// Figures go to bench/results/api.json (this run's only; BENCH_RESULTS=<file> elsewhere) and to stdout.
//
// Environment (all optional): BENCH_DURATION (s, default 10), BENCH_WARMUP (s, 2),
// BENCH_CONNECTIONS (50), BENCH_RULES (10000), BENCH_CPU_PROF=<dir> (the child runs
// with node --cpu-prof and writes its profile there), BENCH_STRICT=1 (exit 1 when a
// target is missed; otherwise only a failed run exits non-zero).
import autocannon, { type Result } from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { ChildMessage, ParentMessage } from './api-server';
import { DATABASE_URL, mulberry32, numberFromEnv, REDIS_URL, root, round } from './support/common';
import { createDatabase, FREQUENCIES, listRules, parseRuleListQuery, quoteIdent, SCOPES, type Database, type Frequency, type Scope } from './support/notify';
import { describeMachine } from './support/report';
import { resultsFile, revision, writeResults } from './support/results';

const RESULTS_FILE = resultsFile('api');
const DURATION_S = numberFromEnv('BENCH_DURATION', 10);
const WARMUP_S = numberFromEnv('BENCH_WARMUP', 2);
const CONNECTIONS = numberFromEnv('BENCH_CONNECTIONS', 50);
const PIPELINING = 1;
const RULE_COUNT = numberFromEnv('BENCH_RULES', 10_000);
const MEMBER_COUNT = 20;
const HUGE = 1_000_000_000;

/** Two filters (scope__in, enabled) over the 10,000 rules, one page of 100. */
export const LIST_QUERY = {
  page_size: '100',
  scope__in: 'new_issue_detected,new_open_port_detected,asset_ssl_changed,new_vulnerability_detected,new_asset_discovered',
  enabled: 'true',
};
export const LIST_PATH = `/v1/platform/notification-rules?${new URLSearchParams(LIST_QUERY).toString()}`;

// ---------------------------------------------------------------------------------
// The child process

export interface Server {
  child: ChildProcess;
  port: number;
  request<T extends ChildMessage['type']>(message: ParentMessage, answer: T): Promise<Extract<ChildMessage, { type: T }>>;
  stop(): Promise<void>;
  exited(): boolean;
}

export async function startServer(schema: string, adminToken: string): Promise<Server> {
  const cpuProf = process.env.BENCH_CPU_PROF;
  const child = fork(join(root, 'bench', 'api-server.ts'), [], {
    cwd: root,
    execArgv: ['--import', 'tsx', '--conditions=@notify/source', '--no-deprecation', ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : [])],
    env: { ...process.env, BENCH_SCHEMA: schema, BENCH_ADMIN_TOKEN: adminToken, DATABASE_URL, REDIS_URL },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let exitCode: number | null | undefined;
  const exit = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    exitCode = code ?? (signal ? -1 : 0);
    resolve();
  }));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start within 60 s')), 60_000);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.port);
      } else if (message.type === 'failed') {
        clearTimeout(timer);
        reject(new Error(`the server failed to start:\n${message.error}`));
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited (code ${exitCode}) before it was ready`));
    });
  });

  return {
    child,
    port,
    exited: () => exitCode !== undefined,
    request(message, answer) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${answer} answer from the server`)), 5_000);
        const onMessage = (reply: ChildMessage) => {
          if (reply.type !== answer) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(reply as Extract<ChildMessage, { type: typeof answer }>);
        };
        child.on('message', onMessage);
        child.send(message);
      });
    },
    async stop() {
      if (exitCode !== undefined) return;
      if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
      else child.kill('SIGTERM');
      const killed = await Promise.race([exit.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 15_000))]);
      if (killed) {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
}

// ---------------------------------------------------------------------------------
// Seeding

interface Seeded {
  organizationId: string;
  key: string;
  memberIds: string[];
}

async function call(base: string, adminToken: string, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const FREQUENCY_WEIGHTS: Record<Frequency, number> = { instant: 0.4, hourly: 0.1, daily: 0.3, weekly: 0.15, monthly: 0.05 };

export async function seed(base: string, adminToken: string, db: Database): Promise<Seeded> {
  // The organization, its members and its key through the operator API, so the key is a real one.
  const org = await call(base, adminToken, 'POST', '/admin/v1/organizations', {
    name: 'Benchmark organization',
    plan: { groups: ['platform'], rate_limit_per_second: HUGE, rate_limit_per_minute: HUGE, monthly_quota: HUGE, max_rules: HUGE },
  });
  const organizationId = org.id as string;
  const memberIds: string[] = [];
  for (let i = 0; i < MEMBER_COUNT; i++) {
    const member = await call(base, adminToken, 'POST', `/admin/v1/organizations/${organizationId}/members`, {
      email: `member${String(i).padStart(2, '0')}@bench.example.com`,
      name: `Member ${i}`,
    });
    memberIds.push(member.team_member_uuid as string);
  }
  const key = (await call(base, adminToken, 'POST', `/admin/v1/organizations/${organizationId}/api-keys`, { name: 'bench' })).key as string;

  // The rules with set-based SQL: one INSERT … SELECT FROM unnest(arrays) per table.
  const random = mulberry32(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const weighted = (): Frequency => {
    let roll = random();
    for (const frequency of FREQUENCIES) {
      roll -= FREQUENCY_WEIGHTS[frequency];
      if (roll < 0) return frequency;
    }
    return 'instant';
  };
  const now = Date.now();
  const year = 365 * 24 * 3600 * 1000;
  const rules = { id: [] as string[], name: [] as string[], scope: [] as Scope[], frequency: [] as Frequency[], hour: [] as Array<number | null>, day: [] as Array<number | null>, enabled: [] as boolean[], added: [] as string[], updated: [] as string[] };
  const links = { ruleId: [] as string[], memberId: [] as string[] };
  for (let i = 0; i < RULE_COUNT; i++) {
    const id = randomUUID();
    const scope = pick(SCOPES);
    const frequency = weighted();
    const added = now - Math.floor(random() * year);
    const updated = added + Math.floor(random() * (now - added));
    rules.id.push(id);
    rules.name.push(`${scope.replaceAll('_', ' ')} #${i}`);
    rules.scope.push(scope);
    rules.frequency.push(frequency);
    rules.hour.push(frequency === 'instant' || frequency === 'hourly' ? null : Math.floor(random() * 24));
    rules.day.push(frequency === 'weekly' ? Math.floor(random() * 7) : null);
    rules.enabled.push(random() < 0.8);
    rules.added.push(new Date(added).toISOString());
    rules.updated.push(new Date(updated).toISOString());
    const members = new Set<string>();
    const wanted = 1 + Math.floor(random() * 3);
    while (members.size < wanted) members.add(pick(memberIds));
    for (const memberId of members) {
      links.ruleId.push(id);
      links.memberId.push(memberId);
    }
  }
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO notification_rules (id, organization_id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, added_date, last_update_date)
       SELECT t.id, $1, t.name, t.scope::scope, NULL, t.frequency::frequency, t.hour, t.day, t.enabled, t.added, t.updated
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::smallint[], $7::smallint[], $8::boolean[], $9::timestamptz[], $10::timestamptz[])
              AS t(id, name, scope, frequency, hour, day, enabled, added, updated)`,
      [organizationId, rules.id, rules.name, rules.scope, rules.frequency, rules.hour, rules.day, rules.enabled, rules.added, rules.updated],
    );
    await client.query(
      'INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT * FROM unnest($1::uuid[], $2::uuid[])',
      [links.ruleId, links.memberId],
    );
    await client.query('COMMIT');
    // Fresh statistics, as autovacuum would have them in production.
    await client.query('ANALYZE notification_rules, notification_rule_members, team_members, api_keys, organizations');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  return { organizationId, key, memberIds };
}

// ---------------------------------------------------------------------------------
// Measuring

export interface Scenario {
  name: string;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Minimum requests/s as a fraction of the bare route's; null for the bare route itself. */
  minRatio: number | null;
  maxP99Ms?: number;
}

interface Measured {
  scenario: Scenario;
  result: Result;
  keyLookups?: number;
}

export async function load(base: string, scenario: Scenario, duration: number): Promise<Result> {
  return autocannon({
    url: `${base}${scenario.path}`,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    idReplacement: scenario.body?.includes('[<id>]') ?? false,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration,
    timeout: 10,
    title: scenario.name,
  });
}

async function measure(base: string, server: Server, scenario: Scenario): Promise<Measured> {
  process.stdout.write(`  ${scenario.label.padEnd(26)} warm-up ${WARMUP_S} s, measure ${DURATION_S} s … `);
  await load(base, scenario, WARMUP_S);
  const before = await server.request({ type: 'stats' }, 'stats');
  const result = await load(base, scenario, DURATION_S);
  const after = await server.request({ type: 'stats' }, 'stats');
  if (server.exited()) throw new Error(`the server died during ${scenario.name}`);
  console.log(`${Math.round(result.requests.average)} req/s`);
  return { scenario, result, keyLookups: after.keyLookups - before.keyLookups };
}

async function expectStatus(base: string, scenario: Scenario, status: number): Promise<string> {
  const response = await fetch(`${base}${scenario.path}`, {
    method: scenario.method,
    headers: { ...scenario.headers },
    body: scenario.body?.replaceAll('[<id>]', 'check'),
  });
  const text = await response.text();
  if (response.status !== status) throw new Error(`${scenario.name}: expected ${status}, got ${response.status}: ${text.slice(0, 500)}`);
  return text;
}

/** The list's SQL alone (listRules on one connection, no HTTP), to tell the database from the app. */
async function timeListSql(db: Database, organizationId: string, iterations = 200): Promise<{ p50_ms: number; p99_ms: number; mean_ms: number }> {
  const query = parseRuleListQuery(LIST_QUERY);
  for (let i = 0; i < 20; i++) await listRules(db, organizationId, query);
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await listRules(db, organizationId, query);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!, 2);
  return { p50_ms: at(0.5), p99_ms: at(0.99), mean_ms: round(times.reduce((a, b) => a + b, 0) / times.length, 2) };
}

// ---------------------------------------------------------------------------------
// Reporting

interface ScenarioReport {
  requests_per_sec: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non2xx: number;
  errors: number;
  ratio_to_bare: number;
  target: string | null;
  pass: boolean | null;
  key_lookups?: number;
}

function report(measured: Measured, baseline: number): ScenarioReport {
  const { scenario, result } = measured;
  const rps = result.requests.average;
  const ratio = rps / baseline;
  const targets: string[] = [];
  let pass: boolean | null = null;
  if (scenario.minRatio !== null) {
    targets.push(`>= ${scenario.minRatio}x bare`);
    pass = ratio >= scenario.minRatio && result.non2xx === 0 && result.errors === 0;
  }
  if (scenario.maxP99Ms !== undefined) {
    targets.push(`p99 < ${scenario.maxP99Ms} ms`);
    pass = (pass ?? true) && result.latency.p99 < scenario.maxP99Ms;
  }
  return {
    requests_per_sec: round(rps),
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    ratio_to_bare: round(ratio, 3),
    target: targets.length ? targets.join(', ') : null,
    pass,
    ...(measured.keyLookups !== undefined && scenario.minRatio !== null ? { key_lookups: measured.keyLookups } : {}),
  };
}

function printTable(rows: Array<{ label: string; report: ScenarioReport }>, baseline: number): void {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non2xx', 'ratio', 'target', 'result'];
  const lines = rows.map(({ label, report: r }) => [
    label,
    String(r.requests_per_sec),
    String(r.latency_p50_ms),
    String(r.latency_p99_ms),
    String(r.non2xx + r.errors),
    r.ratio_to_bare.toFixed(2),
    r.target ?? '(baseline)',
    r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  lines.push(['bare, mean = baseline', String(round(baseline)), '', '', '', '1.00', '', '']);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i >= 1 && i <= 5 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ');
  console.log(`\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const line of lines) console.log(format(line));
}

// ---------------------------------------------------------------------------------

async function main(): Promise<number> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const adminToken = randomBytes(24).toString('hex');
  const loadBefore = os.loadavg();
  let server: Server | undefined;
  let db: Database | undefined;
  try {
    console.log(`bench:api — schema ${schema}, ${RULE_COUNT} rules, ${CONNECTIONS} connections, ${DURATION_S} s per scenario`);
    server = await startServer(schema, adminToken);
    const base = `http://127.0.0.1:${server.port}`;
    db = createDatabase({ url: DATABASE_URL, schema, poolSize: 2 });

    const seedStart = performance.now();
    const seeded = await seed(base, adminToken, db);
    console.log(`  seeded 1 organization, ${MEMBER_COUNT} members, ${RULE_COUNT} rules in ${round((performance.now() - seedStart) / 1000, 1)} s`);

    const apikey = { apikey: seeded.key };
    const bare: Scenario = { name: 'bare', label: 'bare route (first)', method: 'GET', path: '/bench/bare', minRatio: null };
    const noop: Scenario = { name: 'noop', label: 'authenticated no-op', method: 'GET', path: '/bench/noop', headers: apikey, minRatio: 0.8 };
    const list: Scenario = { name: 'list', label: 'GET list (100, 2 filters)', method: 'GET', path: LIST_PATH, headers: apikey, minRatio: 0.25, maxP99Ms: 50 };
    const create: Scenario = {
      name: 'create',
      label: 'POST create',
      method: 'POST',
      path: '/v1/platform/notification-rules',
      headers: { ...apikey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench rule [<id>]', scope: 'new_open_port_detected', frequency: 'daily', members: seeded.memberIds.slice(0, 2) }),
      minRatio: 0.15,
    };

    // Every scenario answers what it should before it is measured.
    await expectStatus(base, bare, 200);
    await expectStatus(base, noop, 200);
    const page = JSON.parse(await expectStatus(base, list, 200)) as { result_count: number; results: unknown[] };
    if (page.results.length !== 100) throw new Error(`the list returned ${page.results.length} rules, not a full page of 100`);
    await expectStatus(base, create, 201);
    const listSql = await timeListSql(db, seeded.organizationId);
    console.log(`  list matches ${page.result_count} of ${RULE_COUNT} rules; its SQL alone: p50 ${listSql.p50_ms} ms, p99 ${listSql.p99_ms} ms`);

    const runs: Measured[] = [];
    runs.push(await measure(base, server, bare));
    runs.push(await measure(base, server, noop));
    runs.push(await measure(base, server, list));
    runs.push(await measure(base, server, create));
    runs.push(await measure(base, server, { ...bare, label: 'bare route (last)' }));

    const [bareFirst, noopRun, listRun, createRun, bareLast] = runs as [Measured, Measured, Measured, Measured, Measured];
    const baseline = (bareFirst.result.requests.average + bareLast.result.requests.average) / 2;
    const rows = [
      { key: 'bare_first', label: bareFirst.scenario.label, report: report(bareFirst, baseline) },
      { key: 'noop', label: noopRun.scenario.label, report: report(noopRun, baseline) },
      { key: 'list', label: listRun.scenario.label, report: report(listRun, baseline) },
      { key: 'create', label: createRun.scenario.label, report: report(createRun, baseline) },
      { key: 'bare_last', label: bareLast.scenario.label, report: report(bareLast, baseline) },
    ];
    const allPass = rows.every((row) => row.report.pass !== false);
    const output = {
      date: new Date().toISOString(),
      ...revision(),
      machine: describeMachine(loadBefore),
      settings: {
        connections: CONNECTIONS,
        pipelining: PIPELINING,
        warmup_s: WARMUP_S,
        duration_s: DURATION_S,
        rules: RULE_COUNT,
        members: MEMBER_COUNT,
        list_path: LIST_PATH,
        list_result_count: page.result_count,
        server: 'separate process (bench/api-server.ts), LOG_LEVEL silent, default DATABASE_POOL_SIZE',
      },
      baseline_requests_per_sec: round(baseline),
      scenarios: Object.fromEntries(rows.map((row) => [row.key, row.report])),
      diagnostics: {
        list_sql_only: listSql,
        key_lookups_during_noop: noopRun.keyLookups,
        noop_requests: noopRun.result.requests.total,
      },
      pass: allPass,
    };
    await writeResults(RESULTS_FILE, output);

    printTable(rows, baseline);
    console.log(`\nkey lookups in the database during the no-op run: ${noopRun.keyLookups} for ${noopRun.result.requests.total} requests`);
    console.log(`${allPass ? 'all targets met' : 'some targets missed'}; written to ${RESULTS_FILE}`);
    return allPass || process.env.BENCH_STRICT !== '1' ? 0 : 1;
  } finally {
    await server?.stop().catch((error: unknown) => console.error('could not stop the server:', error));
    await db?.close().catch(() => {});
    const client = new pg.Client({ connectionString: DATABASE_URL });
    try {
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    } catch (error) {
      console.error(`could not drop schema ${schema}:`, error);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

// Importable (by a profiling script, say) without running the benchmark.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error('bench:api failed:', error);
      process.exit(1);
    },
  );
}
