// `npm run bench:hostile-input`: CPU spent on hostile input that a client or a remote
// server controls (issue 15, items 1 and 2), each next to a baseline of the same size that
// is not hostile, measured in the same run.
//
// - WHOIS answers (parseWhois + findReferral, what the lookup does with each answer) of
//   256 KiB, the client's cap.
// - The log mask (maskUrlPassword) on `a.a.a…@` of 16 and 64 KiB.
// - An anonymous request with a 16 KB `a.a.a…@` query through app.inject (the
//   "incoming request" line is written before authentication), against a plain query of the
//   same length.
//
// CPU is process.cpuUsage() (user + system), so other work on the shared machine costs
// wall time, not these figures. Figures go to bench/results/hostile-input.json (this run's only;
// BENCH_RESULTS=<file> elsewhere) and to stdout; BENCH_SKIP=whois skips the WHOIS cases.
//
// Each WHOIS case runs in a child process, stopped after BENCH_WHOIS_CAP_S seconds (default
// 150; the figure is then "> cap"). BENCH_BASELINE_DIR, a folder holding another version's
// apps/api/src/whois/parse.ts and client.ts (e.g. `git show <commit>:apps/api/src/whois/parse.ts`),
// measures that version beside this one, in the same run.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL, root } from './support/common';
import { describeMachine } from './support/report';
import { resultsFile, revision, writeResults } from './support/results';
import {
  buildApp,
  createDatabase,
  createDeps,
  createLogger,
  createRedis,
  hostileWhoisAnswers,
  loadConfig,
  maskUrlPassword,
  migrate,
  quoteIdent,
  type findReferral,
  type parseWhois,
} from './support/notify';

const RESULTS_FILE = resultsFile('hostile-input');
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));

function cpuMs(run: () => void, times = 1): number {
  const start = process.cpuUsage();
  for (let i = 0; i < times; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / times;
}

async function cpuMsAsync(run: () => Promise<unknown>, times: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < times; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / times;
}

const KIB = 1024;

/** Child mode: `whois <module folder> <case>` prints the CPU ms of one parse + referral search. */
if (process.argv[2] === 'whois') {
  const [folder, name] = [process.argv[3]!, process.argv[4]!];
  const { parseWhois: parse } = (await import(join(folder, 'parse.ts'))) as { parseWhois: typeof parseWhois };
  const { findReferral: referral } = (await import(join(folder, 'client.ts'))) as { findReferral: typeof findReferral };
  const text = hostileWhoisAnswers()[name]!;
  const run = () => {
    parse(text, 'example.com');
    referral(text, { host: 'whois.example', port: 43 });
  };
  // The first run includes compiling the parser (V8's compiler threads count in cpuUsage); the
  // median of five more is the steady state, measured only when a run is short.
  const first = cpuMs(run);
  const more = first < 1000 ? Array.from({ length: 5 }, () => cpuMs(run)).sort((a, b) => a - b) : [];
  process.send!({ first, steady: more[2] }, () => process.exit(0));
} else {
  await main();
}

type WhoisFigure = { first_run: number | string; steady?: number };

function whoisCase(folder: string, name: string, capS: number): Promise<WhoisFigure> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['whois', folder, name], { cwd: root, execArgv: ['--import', 'tsx', '--conditions=@notify/source', '--no-deprecation'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), capS * 1000);
    let result: { first: number; steady?: number } | undefined;
    child.on('message', (message) => (result = message as typeof result));
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      if (!result) resolve({ first_run: `> ${capS * 1000} (stopped)` });
      else resolve({ first_run: Number(result.first.toFixed(1)), ...(result.steady !== undefined && { steady: Number(result.steady.toFixed(2)) }) });
    });
  });
}

async function main(): Promise<void> {
const loadBefore = os.loadavg();
const results: Record<string, unknown> = { date: new Date().toISOString(), ...revision() };

if (!SKIP.has('whois')) {
  const capS = Number(process.env.BENCH_WHOIS_CAP_S ?? 150);
  const versions: Record<string, string> = { current: join(root, 'apps', 'api', 'src', 'whois') };
  if (process.env.BENCH_BASELINE_DIR) versions.baseline = process.env.BENCH_BASELINE_DIR;
  const whois: Record<string, Record<string, WhoisFigure>> = {};
  for (const name of Object.keys(hostileWhoisAnswers())) {
    whois[name] = {};
    for (const [version, folder] of Object.entries(versions)) {
      whois[name][version] = await whoisCase(folder, name, capS);
      console.log(`whois ${name} (256 KiB), ${version}: ${JSON.stringify(whois[name][version])} ms CPU`);
    }
  }
  results.whois_ms_cpu_per_256KiB_answer = whois;
}

const hostile = (size: number) => 'a.'.repeat(size / 2 - 1) + 'a@';
const mask: Record<string, number> = {};
for (const size of [16 * KIB, 64 * KIB]) {
  const times = 3;
  mask[`hostile_${size / KIB}KiB`] = Number(cpuMs(() => maskUrlPassword(hostile(size)), times).toFixed(2));
  mask[`plain_${size / KIB}KiB`] = Number(cpuMs(() => maskUrlPassword('a'.repeat(size - 1) + '@'), times).toFixed(2));
}
console.log('maskUrlPassword ms CPU', mask);
results.mask_ms_cpu = mask;

// An app whose logger writes every line (info) to a sink that drops it: the cost measured is
// building and masking the line, not the terminal.
const schema = `bench_${randomBytes(4).toString('hex')}`;
await migrate({ url: DATABASE_URL, schema });
const db = createDatabase({ url: DATABASE_URL, schema, poolSize: 2 });
const redis = createRedis(REDIS_URL, 'notify-bench');
const config = loadConfig({ DATABASE_URL, REDIS_URL, LOG_LEVEL: 'info', QUEUE_PREFIX: `bench-${Date.now()}` });
const logger = createLogger({ level: 'info', destination: { write: () => {} } });
const deps = createDeps(config, { db, redis, logger });
const { app } = await buildApp(deps);
await app.ready();
const QUERY = 16_000;
const urls = {
  plain: `/v1/platform/notification-rules?q=${'a'.repeat(QUERY)}`,
  hostile: `/v1/platform/notification-rules?q=${'a.'.repeat(QUERY / 2 - 1)}a@`,
};
const request: Record<string, number> = {};
for (let round = 0; round < 2; round++) {
  // Round 0 warms up; round 1 is recorded.
  for (const [name, url] of Object.entries(urls)) {
    const ms = await cpuMsAsync(async () => {
      const response = await app.inject({ method: 'GET', url });
      if (response.statusCode !== 401) throw new Error(`expected 401, got ${response.statusCode}`);
    }, 20);
    if (round === 1) request[`${name}_16KB_query`] = Number(ms.toFixed(2));
  }
}
console.log('anonymous request ms CPU', request);
results.anonymous_request_ms_cpu = request;
await app.close();
await redis.quit();
await db.close();
const client = new pg.Client({ connectionString: DATABASE_URL });
await client.connect();
await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
await client.end();

await writeResults(RESULTS_FILE, { ...results, machine: describeMachine(loadBefore) });
console.log(`written to ${RESULTS_FILE}`);
}
