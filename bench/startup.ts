// `npm run bench:startup`: how long the server takes from process start to /health/ready 200, and
// its resident memory once ready, built (node on apps/server/dist, what NODE_ENV=production npm
// start runs) against the sources through tsx (what npm start runs without it). The two alternate,
// run after run, in the same session, because the machine is shared and absolute numbers drift.
// Every run is a whole process with all four roles against one schema, migrated before the first
// run so that no run pays for the migrations; SMTP is the outbox. Needs `npm run build` first.
// Figures go to bench/results/startup.json (this run's only; BENCH_RESULTS=<file> elsewhere) and to
// stdout.
//
// Environment (optional): BENCH_RUNS (per variant, default 7), BENCH_SETTLE_MS (how long after
// ready the memory is read, default 2000).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '@notify/db';
import { resultsFile, revision, writeResults } from './support/results';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS_FILE = resultsFile('startup');
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = Number(process.env.BENCH_RUNS) > 0 ? Number(process.env.BENCH_RUNS) : 7;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS) >= 0 && process.env.BENCH_SETTLE_MS ? Number(process.env.BENCH_SETTLE_MS) : 2000;
const PORT = 3000 + 100 + Math.floor(Math.random() * 800);

const VARIANTS = {
  built: ['--enable-source-maps', 'apps/server/dist/main.js'],
  tsx: ['--import', 'tsx', '--conditions=@notify/source', 'apps/server/src/main.ts'],
} as const;
type Variant = keyof typeof VARIANTS;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process, from /proc (Linux). */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

async function once(variant: Variant, env: Record<string, string>): Promise<{ ready_ms: number; rss_mib: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...VARIANTS[variant]], { cwd: root, env: { ...env, PORT: String(PORT) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      const response = await fetch(`http://127.0.0.1:${PORT}/health/ready`).catch(() => null);
      if (response?.status === 200) break;
      if (child.exitCode !== null) throw new Error(`${variant} exited before ready: ${stderr}`);
      if (performance.now() - started > 60_000) throw new Error(`${variant} not ready within 60 s`);
      await sleep(10);
    }
    const readyMs = Math.round(performance.now() - started);
    await sleep(SETTLE_MS);
    return { ready_ms: readyMs, rss_mib: rssMiB(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  if (!existsSync(join(root, 'apps/server/dist/main.js'))) throw new Error('no build: run `npm run build` first');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const outbox = await mkdtemp(join(os.tmpdir(), 'notify-startup-'));
  await migrate({ url: DATABASE_URL, schema });
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    QUEUE_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
    OUTBOX_DIR: outbox,
    ADMIN_TOKEN: 'bench-admin-token',
    LOG_LEVEL: 'warn',
  };
  const loadBefore = os.loadavg();
  const runs: Record<Variant, Array<{ ready_ms: number; rss_mib: number }>> = { built: [], tsx: [] };
  try {
    // One unmeasured run of each fills the page cache and tsx's transform cache, as on any restart.
    for (const variant of Object.keys(VARIANTS) as Variant[]) await once(variant, env);
    for (let i = 0; i < RUNS; i++) {
      const order: Variant[] = i % 2 === 0 ? ['built', 'tsx'] : ['tsx', 'built'];
      for (const variant of order) {
        const result = await once(variant, env);
        runs[variant].push(result);
        console.log(`${variant.padEnd(5)} run ${i + 1}: ready in ${result.ready_ms} ms, RSS ${result.rss_mib} MiB`);
      }
    }
  } finally {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    await rm(outbox, { recursive: true, force: true });
  }
  const summary = Object.fromEntries(
    (Object.keys(runs) as Variant[]).map((variant) => {
      const ready = runs[variant].map((run) => run.ready_ms);
      const rss = runs[variant].map((run) => run.rss_mib);
      return [variant, { ready_ms: { median: median(ready), min: Math.min(...ready), max: Math.max(...ready) }, rss_mib: { median: median(rss), min: Math.min(...rss), max: Math.max(...rss) }, runs: runs[variant] }];
    }),
  );
  const report = {
    date: new Date().toISOString(),
    ...revision(),
    machine: { cpus: os.cpus().length, node: process.version, load_average_before: loadBefore, load_average_after: os.loadavg() },
    settings: { runs_per_variant: RUNS, settle_ms: SETTLE_MS, roles: 'api,matcher,scheduler,mailer', smtp: 'outbox', measured: 'spawn → first 200 from /health/ready; VmRSS after settle_ms' },
    variants: { built: VARIANTS.built.join(' '), tsx: `node ${VARIANTS.tsx.join(' ')}` },
    ...summary,
  };
  await writeResults(RESULTS_FILE, report);
  console.log(JSON.stringify({ built: summary.built, tsx: summary.tsx }, (key, value) => (key === 'runs' ? undefined : value), 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
