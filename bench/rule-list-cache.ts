// `npm run bench:list-cache`: what 1,000 distinct rule-list queries with big pages leave on the heap.
//
// One organization of 100 rules, each notifying 120 members, so a page of 100 rules is about a
// megabyte; a client asks for it 1,000 times with a different `added_date__lte` each time (every
// one a new cache entry). The heap is measured after a full GC before and after, in process,
// through app.inject. Figures go to bench/results/rule-list-cache.json (this run's only;
// BENCH_RESULTS=<file> elsewhere) and to stdout.
//
// Runs with --expose-gc (the npm script passes it). Environment (optional): BENCH_QUERIES (1000),
// BENCH_MEMBERS (120), RULE_LIST_CACHE_BYTES (the default).
import os from 'node:os';
import { startTestApp } from '../test/support/app';
import { describeMachine } from './support/report';
import { resultsFile, revision, writeResults } from './support/results';

const RESULTS_FILE = resultsFile('rule-list-cache');
const QUERIES = Number(process.env.BENCH_QUERIES ?? 1000);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 120);
const RULES = '/v1/platform/notification-rules';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

const env: Record<string, string> = {};
if (process.env.RULE_LIST_CACHE_BYTES) env.RULE_LIST_CACHE_BYTES = process.env.RULE_LIST_CACHE_BYTES;
const loadBefore = os.loadavg();
const t = await startTestApp(env);
try {
  const org = await t.createOrg({ memberCount: MEMBERS });
  const members = org.members.map((member) => member.team_member_uuid);
  for (let i = 0; i < 100; i++) {
    const created = await t.api(org.key, 'POST', RULES, { name: `${'n'.repeat(200)} ${i}`, scope: 'asset_dns_changed', members });
    if (created.statusCode !== 201) throw new Error(created.body);
  }
  // One query first, so that code paths and connections exist before the baseline.
  const pageBytes = (await t.api(org.key, 'GET', `${RULES}?page_size=100`)).body.length;
  const before = heapUsed();
  const started = performance.now();
  for (let i = 0; i < QUERIES; i++) {
    const lte = new Date(Date.UTC(2090, 0, 1) + i * 1000).toISOString();
    const response = await t.api(org.key, 'GET', `${RULES}?page_size=100&added_date__lte=${lte}`);
    if (response.statusCode !== 200) throw new Error(response.body);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = heapUsed();
  const cache = (t.deps as { ruleListCache?: { bytes: number; size: number } }).ruleListCache;
  const result = {
    date: new Date().toISOString(),
    ...revision(),
    queries: QUERIES,
    page_bytes: pageBytes,
    cache_limit_bytes: t.deps.config.ruleListCacheBytes ?? null,
    heap_before_mib: mib(before),
    heap_after_mib: mib(after),
    heap_growth_mib: mib(after - before),
    cache_bytes: cache?.bytes ?? null,
    cache_entries: cache?.size ?? null,
    seconds: Math.round(seconds * 10) / 10,
    machine: describeMachine(loadBefore),
  };
  console.log(JSON.stringify(result, null, 2));
  await writeResults(RESULTS_FILE, result);
  console.log(`written to ${RESULTS_FILE}`);
} finally {
  await t.close();
}
