// `npm run bench:pipeline`: the delivery pipeline against real Redis, PostgreSQL and an SMTP
// sink on this machine, each measure beside a raw baseline taken in the same run (before and
// after it; the mean is the baseline), because the machine is shared and absolute figures drift.
//
//   1. ingest      accepted events/s over HTTP, batches of 1,000 (server: api role only)
//                  vs BullMQ addBulk of the same events as one job each
//   2. matching    events/s through the matcher role with 100,000 rules loaded (2,000
//                  organizations × 50), and the matcher's RSS with them
//                  vs a no-op BullMQ worker draining one job per event (same queues, concurrency)
//   3. instant     202 of the ingest request → SMTP accept, at 200 single-event requests/s,
//                  every event the first match of its own instant rule (server: all roles)
//   4. digests     5,000 rule flushes of 100,000 pending matches → 5,000 e-mails accepted
//                  vs nodemailer's pooled transport sending 5,000 similar messages
//
// Every part has its own schema bench_<hex> and queue prefixes bench-<hex>; they, the child
// processes (bench/pipeline-child.ts) and the sink are removed whether the part passes or fails.
// Figures go to bench/results/pipeline.json and to stdout.
//
// Environment (all optional): BENCH_PARTS (ingest,matching,instant,digests), BENCH_CPU_PROF=<dir>
// (children run with --cpu-prof), BENCH_LOG_LEVEL (children's LOG_LEVEL, default warn),
// BENCH_STRICT=1 (exit 1 when a target is missed), and the sizes below.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { FREQUENCIES, SCOPES, type Frequency, type Scope } from '@notify/core';
import { createDatabase, migrate, type Database } from '@notify/db';
import { matchQueueName, jobPolicies, Queues } from '@notify/queues';
import {
  DATABASE_URL,
  deleteKeys,
  mb,
  mulberry32,
  numberFromEnv,
  percentile,
  pooled,
  REDIS_URL,
  Resources,
  root,
  round,
  sleep,
  startSink,
  until,
  type Child,
} from './pipeline-support';
import {
  digestSchedule,
  insertEvents,
  insertMembers,
  insertOrganizations,
  insertPendingMatches,
  insertRules,
  organizations,
  randomScope,
  STRATEGIES,
  wireEvent,
  type MatchSeed,
  type MemberSeed,
  type RuleSeed,
  type WireEvent,
} from './pipeline-seed';

const RESULTS_FILE = join(root, 'bench', 'results', 'pipeline.json');

const INGEST_BATCHES = numberFromEnv('BENCH_INGEST_BATCHES', 50);
const INGEST_WARMUP_BATCHES = 5;
const INGEST_BATCH_SIZE = 1000;
const INGEST_CONNECTIONS = numberFromEnv('BENCH_INGEST_CONNECTIONS', 4);
const INGEST_ORGS = 200;

const MATCH_ORGS = numberFromEnv('BENCH_MATCH_ORGS', 2000);
const RULES_PER_ORG = numberFromEnv('BENCH_RULES_PER_ORG', 50);
const MEMBERS_PER_ORG = 5;
const MATCH_EVENTS = numberFromEnv('BENCH_MATCH_EVENTS', 50_000);
/** The matcher role's default MATCH_CONCURRENCY (per scope queue), used by the baseline too. */
const MATCH_CONCURRENCY = 2;
const FREQUENCY_WEIGHTS: Record<Frequency, number> = { instant: 0.03, hourly: 0.05, daily: 0.5, weekly: 0.37, monthly: 0.05 };
const STRATEGY_SHARE = 0.3;

const INSTANT_RATE = numberFromEnv('BENCH_INSTANT_RATE', 200);
const INSTANT_SECONDS = numberFromEnv('BENCH_INSTANT_SECONDS', 15);
const INSTANT_WARMUP = 200;

const DIGEST_RULES = numberFromEnv('BENCH_DIGEST_RULES', 5000);
const DIGEST_MATCHES = numberFromEnv('BENCH_DIGEST_MATCHES', 100_000);
const FLUSH_CONCURRENCY = numberFromEnv('BENCH_FLUSH_CONCURRENCY', 10);
/** The defaults of SMTP_MAX_CONNECTIONS and MAIL_CONCURRENCY, which the baseline uses too. */
const SMTP_MAX_CONNECTIONS = 5;
const MAIL_CONCURRENCY = 10;

const INGEST_TOKEN = randomBytes(24).toString('hex');
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const MAIL_FROM = 'Security Alerts <alerts@notify.bench>';

// ---------------------------------------------------------------------------------
// Reports

interface Measure {
  label: string;
  unit: string;
  value: number;
  /** Mean of the raw baseline runs, null where the target is absolute. */
  baseline: number | null;
  baseline_runs: number[];
  ratio: number | null;
  target: string;
  pass: boolean;
}

interface PartReport {
  measures: Record<string, Measure>;
  details: Record<string, unknown>;
}

function ratioMeasure(label: string, unit: string, value: number, runs: number[], minRatio: number, ok = true): Measure {
  const baseline = runs.reduce((a, b) => a + b, 0) / runs.length;
  const ratio = value / baseline;
  return {
    label,
    unit,
    value: round(value, 1),
    baseline: round(baseline, 1),
    baseline_runs: runs.map((run) => round(run, 1)),
    ratio: round(ratio, 3),
    target: `>= ${minRatio}x baseline`,
    pass: ok && ratio >= minRatio,
  };
}

function limitMeasure(label: string, unit: string, value: number, max: number, ok = true): Measure {
  return { label, unit, value: round(value, 1), baseline: null, baseline_runs: [], ratio: null, target: `<= ${max} ${unit}`, pass: ok && value <= max };
}

const log = (message: string) => console.log(`  ${message}`);
const seconds = (ms: number) => `${round(ms / 1000, 2)} s`;

function processEnv(schema: string, prefix: string, extra: Record<string, string>): Record<string, string> {
  return {
    BENCH_CHILD_MODE: 'process',
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    HOST: '127.0.0.1',
    PORT: '0',
    INGEST_TOKEN,
    ADMIN_TOKEN,
    MAIL_FROM,
    SMTP_URL: '',
    ...extra,
  };
}

async function newSchema(res: Resources, poolSize = 4): Promise<{ schema: string; db: Database }> {
  const schema = res.schema();
  await migrate({ url: DATABASE_URL, schema });
  const db = createDatabase({ url: DATABASE_URL, schema, poolSize });
  res.onRelease(() => db.close());
  return { schema, db };
}

function newRedis(res: Resources, name: string): Redis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null, connectionName: name });
  res.onRelease(async () => redis.disconnect());
  return redis;
}

async function stopChild(res: Resources, child: Child): Promise<void> {
  await child.stop();
  res.children.delete(child);
}

async function postJson(url: string, token: string, body: string | undefined): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  const text = await response.text();
  try {
    return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, json: { body: text.slice(0, 500) } };
  }
}

// ---------------------------------------------------------------------------------
// 1. Ingest

async function ingestPart(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(1);
  const orgs = organizations(INGEST_ORGS, random, 'Ingest');
  await insertOrganizations(db.pool, orgs);
  const batches: WireEvent[][] = Array.from({ length: INGEST_WARMUP_BATCHES + INGEST_BATCHES }, (_, b) =>
    Array.from({ length: INGEST_BATCH_SIZE }, (_, i) => {
      const o = Math.floor(random() * orgs.length);
      return wireEvent(random, `ing-${b}-${i}`, orgs[o]!.id, randomScope(random), o);
    }),
  );
  const bodies = batches.map((events) => JSON.stringify({ events }));
  const measured = INGEST_BATCHES * INGEST_BATCH_SIZE;
  log(`${INGEST_WARMUP_BATCHES} + ${INGEST_BATCHES} batches of ${INGEST_BATCH_SIZE} events over ${INGEST_ORGS} organizations (${round(bodies[0]!.length / 1024)} KiB a body), ${INGEST_CONNECTIONS} connections`);

  // The raw baseline: the same events, one BullMQ job each, addBulk per batch, as many in flight.
  const redis = newRedis(res, 'bench-ingest');
  const raw = async (): Promise<number> => {
    const prefix = res.prefix();
    const queue = new Queue('events', { connection: redis, prefix, defaultJobOptions: jobPolicies.match });
    try {
      await queue.waitUntilReady();
      const add = (b: number) => queue.addBulk(batches[b]!.map((event) => ({ name: 'event', data: event })));
      await pooled(INGEST_WARMUP_BATCHES, INGEST_CONNECTIONS, async (b) => void (await add(b)));
      const start = performance.now();
      await pooled(INGEST_BATCHES, INGEST_CONNECTIONS, async (b) => void (await add(INGEST_WARMUP_BATCHES + b)));
      const elapsed = performance.now() - start;
      const jobs = await queue.getWaitingCount();
      if (jobs !== INGEST_BATCHES * INGEST_BATCH_SIZE + INGEST_WARMUP_BATCHES * INGEST_BATCH_SIZE) throw new Error(`the raw baseline queued ${jobs} jobs`);
      const rate = measured / (elapsed / 1000);
      log(`raw addBulk: ${round(rate)} jobs/s (${seconds(elapsed)})`);
      return rate;
    } finally {
      await queue.close();
      await deleteKeys(redis, prefix);
      res.prefixes.delete(prefix);
    }
  };

  const before = await raw();
  const prefix = res.prefix();
  const server = await res.child('ingest-api', processEnv(schema, prefix, { ROLES: 'api' }));
  const url = `http://127.0.0.1:${server.ready.port}/v1/ingest/events`;
  const latencies: number[] = [];
  let accepted = 0;
  const post = async (b: number, record: boolean) => {
    const start = performance.now();
    const { status, json } = await postJson(url, INGEST_TOKEN, bodies[b]);
    if (status !== 202) throw new Error(`ingest answered ${status}: ${JSON.stringify(json)}`);
    if (record) {
      latencies.push(performance.now() - start);
      accepted += json.accepted as number;
    }
  };
  await pooled(INGEST_WARMUP_BATCHES, INGEST_CONNECTIONS, (b) => post(b, false));
  const start = performance.now();
  await pooled(INGEST_BATCHES, INGEST_CONNECTIONS, (b) => post(INGEST_WARMUP_BATCHES + b, true));
  const elapsed = performance.now() - start;
  const rate = accepted / (elapsed / 1000);
  log(`HTTP ingest: ${round(rate)} events/s (${seconds(elapsed)})`);
  await stopChild(res, server);

  const stored = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
  const queues = new Queues({ connection: redis, prefix });
  let jobs = 0;
  let published = 0;
  for (const queue of queues.match.values()) {
    for (const job of await queue.getWaiting(0, -1)) {
      jobs++;
      published += job.data.events.length;
    }
  }
  await queues.close();
  const after = await raw();

  latencies.sort((a, b) => a - b);
  const total = (INGEST_WARMUP_BATCHES + INGEST_BATCHES) * INGEST_BATCH_SIZE;
  const ok = accepted === measured && stored === total && published === total;
  if (!ok) log(`CHECK FAILED: accepted ${accepted} of ${measured}, stored ${stored} and published ${published} of ${total}`);
  return {
    measures: { ingest: ratioMeasure('ingest (HTTP, 1,000/batch)', 'events/s', rate, [before, after], 0.5, ok) },
    details: {
      batches: INGEST_BATCHES,
      warmup_batches: INGEST_WARMUP_BATCHES,
      batch_size: INGEST_BATCH_SIZE,
      connections: INGEST_CONNECTIONS,
      organizations: INGEST_ORGS,
      body_kib: round(bodies[0]!.length / 1024),
      seconds: round(elapsed / 1000, 3),
      accepted,
      stored_events: stored,
      published_events: published,
      match_jobs: jobs,
      request_p50_ms: round(percentile(latencies, 0.5), 1),
      request_p99_ms: round(percentile(latencies, 0.99), 1),
      server: 'child process, ROLES=api, default DATABASE_POOL_SIZE (10)',
      baseline: 'BullMQ Queue.addBulk of the same events, one job each (the event as job data, jobPolicies.match options), one addBulk per batch of 1,000, as many in flight as HTTP connections',
    },
  };
}

// ---------------------------------------------------------------------------------
// 2. Matching

async function matchingPart(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(2);
  const seedStart = performance.now();
  const orgs = organizations(MATCH_ORGS, random, 'Matching');
  const members: MemberSeed[] = orgs.flatMap((org, o) =>
    Array.from({ length: MEMBERS_PER_ORG }, (_, m) => ({ id: randomUUID(), organizationId: org.id, email: `m${m}@org${o}.match.bench.example.com` })),
  );
  const weighted = (): Frequency => {
    let roll = random();
    for (const frequency of FREQUENCIES) {
      roll -= FREQUENCY_WEIGHTS[frequency];
      if (roll < 0) return frequency;
    }
    return 'daily';
  };
  const rules: RuleSeed[] = orgs.flatMap((org, o) =>
    Array.from({ length: RULES_PER_ORG }, (_, r) => {
      const frequency = weighted();
      const orgMembers = members.slice(o * MEMBERS_PER_ORG, (o + 1) * MEMBERS_PER_ORG);
      const first = Math.floor(random() * MEMBERS_PER_ORG);
      const memberIds = random() < 0.5 ? [orgMembers[first]!.id] : [orgMembers[first]!.id, orgMembers[(first + 1) % MEMBERS_PER_ORG]!.id];
      return {
        id: randomUUID(),
        organizationId: org.id,
        name: `Rule ${r}`,
        scope: randomScope(random),
        strategy: random() < STRATEGY_SHARE ? STRATEGIES[Math.floor(random() * STRATEGIES.length)]! : null,
        frequency,
        ...digestSchedule(frequency, random),
        enabled: random() < 0.95,
        memberIds,
      };
    }),
  );
  const events: WireEvent[] = Array.from({ length: MATCH_EVENTS }, (_, i) => {
    const o = Math.floor(random() * orgs.length);
    return wireEvent(random, `m-${i}`, orgs[o]!.id, randomScope(random), o);
  });
  await insertOrganizations(db.pool, orgs);
  await insertMembers(db.pool, members);
  await insertRules(db.pool, rules);
  await insertEvents(db.pool, events);
  await db.pool.query('ANALYZE organizations, team_members, notification_rules, notification_rule_members, events');
  const enabled = rules.filter((rule) => rule.enabled).length;
  log(`seeded ${orgs.length} organizations, ${members.length} members, ${rules.length} rules (${enabled} enabled), ${events.length} unmatched events in ${seconds(performance.now() - seedStart)}`);

  const byScope = new Map<Scope, Array<[string, string]>>();
  for (const event of events) {
    const pairs = byScope.get(event.scope) ?? [];
    pairs.push([event.organization_id, event.id]);
    byScope.set(event.scope, pairs);
  }
  const redis = newRedis(res, 'bench-matching');

  // The raw baseline: one job per event in the same scope queues, drained by no-op workers.
  const drain = async (): Promise<number> => {
    const prefix = res.prefix();
    const queues = SCOPES.map((scope) => new Queue(matchQueueName(scope), { connection: redis, prefix, defaultJobOptions: jobPolicies.match }));
    let child: Child | undefined;
    try {
      await Promise.all(queues.map((queue) => queue.pause()));
      await Promise.all(
        SCOPES.map(async (scope, s) => {
          const pairs = byScope.get(scope) ?? [];
          for (let i = 0; i < pairs.length; i += 1000) {
            await queues[s]!.addBulk(pairs.slice(i, i + 1000).map((pair) => ({ name: 'match', data: { events: [pair] } })));
          }
        }),
      );
      child = await res.child('drain', {
        BENCH_CHILD_MODE: 'drain',
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        BENCH_QUEUES: SCOPES.map(matchQueueName).join(','),
        MATCH_CONCURRENCY: String(MATCH_CONCURRENCY),
        BENCH_EXPECTED: String(events.length),
      });
      const done = child.next('done', { timeoutMs: 300_000 });
      const start = performance.now();
      await Promise.all(queues.map((queue) => queue.resume()));
      const result = await done;
      const elapsed = performance.now() - start;
      if (result.failed) throw new Error(`the no-op drain failed ${result.failed} jobs: ${result.firstError}`);
      const rate = events.length / (elapsed / 1000);
      log(`raw no-op drain: ${round(rate)} jobs/s (${seconds(elapsed)})`);
      return rate;
    } finally {
      if (child) await stopChild(res, child);
      await Promise.allSettled(queues.map((queue) => queue.close()));
      await deleteKeys(redis, prefix);
      res.prefixes.delete(prefix);
    }
  };

  const before = await drain();

  const prefix = res.prefix();
  const queues = new Queues({ connection: redis, prefix });
  res.onRelease(() => queues.close());
  await Promise.all([...queues.match.values()].map((queue) => queue.pause()));
  for (const [scope, pairs] of byScope) await queues.requestMatch(scope, pairs);
  const loadStart = performance.now();
  const matcher = await res.child('matcher', processEnv(schema, prefix, { ROLES: 'match' }), 300_000);
  const loaded = matcher.ready.memory;
  log(`matcher started with ${matcher.ready.rules} rules in ${seconds(performance.now() - loadStart)}: RSS ${mb(loaded.rss)} MB, heap ${mb(loaded.heapUsed)} MB`);

  const unmatched = async () => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE matched_at IS NULL')).rows[0]!.n;
  const start = performance.now();
  await Promise.all([...queues.match.values()].map((queue) => queue.resume()));
  let lastReport = start;
  const end = await until(
    async () => {
      // Ordered as the (matched_at, received_at) index is, so it stays an index scan however many are left.
      const { rows } = await db.pool.query('SELECT 1 FROM events WHERE matched_at IS NULL ORDER BY matched_at, received_at LIMIT 1');
      if (rows.length && performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        log(`… ${await unmatched()} events still unmatched after ${seconds(lastReport - start)}`);
      }
      if (matcher.exited()) throw new Error('the matcher died');
      return rows.length === 0;
    },
    { everyMs: 25, timeoutMs: 400_000, what: 'matching' },
  );
  const elapsed = end - start;
  const rate = events.length / (elapsed / 1000);
  const after = await matcher.next('memory', { send: { type: 'memory' } });
  log(`matcher: ${round(rate)} events/s (${seconds(elapsed)}); RSS ${mb(after.memory.rss)} MB, peak ${after.memory.peakRss === null ? '?' : mb(after.memory.peakRss)} MB`);
  let failedJobs = 0;
  for (const queue of queues.match.values()) failedJobs += await queue.getFailedCount();
  await stopChild(res, matcher);

  const { rows: matchRows } = await db.pool.query<{ frequency: string; n: number }>(
    'SELECT r.frequency::text, count(*)::int AS n FROM matches m JOIN notification_rules r ON r.id = m.rule_id GROUP BY 1 ORDER BY 1',
  );
  const deliveries = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries')).rows[0]!.n;
  const left = await unmatched();

  const after2 = await drain();
  const ok = left === 0 && failedJobs === 0;
  return {
    measures: {
      matching: ratioMeasure(`matching (${rules.length / 1000}k rules)`, 'events/s', rate, [before, after2], 0.5, ok),
      matcher_rss_loaded: limitMeasure('matcher RSS, index loaded', 'MB', mb(loaded.rss), 400),
      matcher_rss_after: limitMeasure('matcher RSS, after matching', 'MB', mb(after.memory.rss), 400),
    },
    details: {
      organizations: orgs.length,
      rules: rules.length,
      enabled_rules: enabled,
      rules_in_index: matcher.ready.rules,
      members: members.length,
      frequency_weights: FREQUENCY_WEIGHTS,
      strategy_share: STRATEGY_SHARE,
      events: events.length,
      seconds: round(elapsed / 1000, 3),
      match_jobs: Math.ceil(events.length / 100),
      matches_by_frequency: Object.fromEntries(matchRows.map((row) => [row.frequency, row.n])),
      instant_deliveries: deliveries,
      failed_jobs: failedJobs,
      unmatched_after: left,
      memory_after_index_load: memoryJson(loaded),
      memory_after_matching: memoryJson(after.memory),
      server: `child process, ROLES=matcher, MATCH_CONCURRENCY ${MATCH_CONCURRENCY} per scope queue (${SCOPES.length} queues), default DATABASE_POOL_SIZE (10); queues paused while it loads, the clock starts at resume`,
      baseline: `no-op BullMQ workers (${SCOPES.length} scope queues × concurrency ${MATCH_CONCURRENCY}) in a child process draining ${events.length} jobs of one event each (jobPolicies.match), from resume to the last completion`,
    },
  };
}

function memoryJson(memory: { rss: number; heapUsed: number; heapTotal: number; external: number; peakRss: number | null }) {
  return { rss_mb: mb(memory.rss), heap_used_mb: mb(memory.heapUsed), heap_total_mb: mb(memory.heapTotal), external_mb: mb(memory.external), peak_rss_mb: memory.peakRss === null ? null : mb(memory.peakRss) };
}

// ---------------------------------------------------------------------------------
// 3. Instant latency

async function instantPart(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const measuredCount = Math.round(INSTANT_RATE * INSTANT_SECONDS);
  const pairs = INSTANT_WARMUP + measuredCount;
  const orgCount = Math.ceil(pairs / SCOPES.length);
  const random = mulberry32(3);
  const orgs = organizations(orgCount, random, 'Instant');
  // One instant rule per (organization, scope), with a member of its own: every event is the
  // first match of its rule (no coalescing), and its e-mail is known by its recipient.
  const members: MemberSeed[] = [];
  const rules: RuleSeed[] = [];
  for (let k = 0; k < orgCount * SCOPES.length; k++) {
    const org = orgs[Math.floor(k / SCOPES.length)]!;
    const member = { id: randomUUID(), organizationId: org.id, email: `i${k}@instant.bench.example.com` };
    members.push(member);
    rules.push({
      id: randomUUID(),
      organizationId: org.id,
      name: `Instant ${k}`,
      scope: SCOPES[k % SCOPES.length]!,
      strategy: null,
      frequency: 'instant',
      deliveryHour: null,
      deliveryDayOfWeek: null,
      enabled: true,
      memberIds: [member.id],
    });
  }
  await insertOrganizations(db.pool, orgs);
  await insertMembers(db.pool, members);
  await insertRules(db.pool, rules);
  await db.pool.query('ANALYZE organizations, team_members, notification_rules, notification_rule_members');
  log(`seeded ${orgs.length} organizations, ${rules.length} instant rules with one member each`);

  const sink = await startSink();
  res.onRelease(() => sink.close());
  sink.track = true;
  const prefix = res.prefix();
  const server = await res.child('instant-all-roles', processEnv(schema, prefix, { SMTP_URL: sink.url }));
  const url = `http://127.0.0.1:${server.ready.port}/v1/ingest/events`;

  const sentAt = new Map<string, number>();
  const acceptedAt202 = new Map<string, number>();
  const requestMs: number[] = [];
  const errors: string[] = [];
  const fire = async (k: number) => {
    const org = orgs[Math.floor(k / SCOPES.length)]!;
    const event = wireEvent(random, `lat-${k}`, org.id, SCOPES[k % SCOPES.length]!, Math.floor(k / SCOPES.length));
    const email = `i${k}@instant.bench.example.com`;
    const start = performance.now();
    sentAt.set(email, start);
    try {
      const { status, json } = await postJson(url, INGEST_TOKEN, JSON.stringify(event));
      const at = performance.now();
      if (status !== 202 || json.accepted !== 1) errors.push(`${status} ${JSON.stringify(json)}`);
      else {
        acceptedAt202.set(email, at);
        requestMs.push(at - start);
      }
    } catch (error) {
      errors.push((error as Error).message);
    }
  };
  /** Open loop: request k goes at start + k/rate, whether or not earlier ones were answered. */
  const run = async (from: number, count: number) => {
    const inflight: Array<Promise<void>> = [];
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const wait = start + (i * 1000) / INSTANT_RATE - performance.now();
      if (wait >= 1) await sleep(wait);
      inflight.push(fire(from + i));
    }
    const sendSeconds = (performance.now() - start) / 1000;
    await Promise.all(inflight);
    return sendSeconds;
  };

  await run(0, INSTANT_WARMUP);
  await sink.waitFor(INSTANT_WARMUP, 60_000);
  log(`warm-up: ${INSTANT_WARMUP} events, all e-mailed`);
  sink.reset();
  requestMs.length = 0;
  acceptedAt202.clear();
  sentAt.clear();
  const errorsBefore = errors.length;
  const sendSeconds = await run(INSTANT_WARMUP, measuredCount);
  let timedOut = false;
  await sink.waitFor(measuredCount, 120_000).catch((error: Error) => {
    timedOut = true;
    log(error.message);
  });
  const latencies: number[] = [];
  let missing = 0;
  for (const [email, at202] of acceptedAt202) {
    const at = sink.acceptedAt.get(email);
    if (at === undefined) missing++;
    else latencies.push(at - at202);
  }
  latencies.sort((a, b) => a - b);
  requestMs.sort((a, b) => a - b);
  const { rows: sent } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'sent'`);
  // Where the time goes, from the database's own clock: received → picked up by the matcher
  // (matched_at is the matcher's clock at the job's start) → delivery row → sent.
  const measuredIds = Array.from({ length: measuredCount }, (_, i) => `lat-${INSTANT_WARMUP + i}`);
  const { rows: stageRows } = await db.pool.query<{ stage: string; p50: number; p99: number }>(
    `WITH t AS (
       SELECT extract(epoch FROM e.matched_at - e.received_at) * 1000 AS to_matcher,
              extract(epoch FROM d.created_at - e.matched_at) * 1000 AS to_delivery,
              extract(epoch FROM d.sent_at - d.created_at) * 1000 AS to_sent
         FROM events e
         JOIN matches m ON m.organization_id = e.organization_id AND m.event_id = e.id
         JOIN deliveries d ON d.rule_id = m.rule_id AND d.period_key = m.period_key
        WHERE e.id = ANY($1::text[]))
     SELECT 'received_to_matcher' AS stage, percentile_cont(0.5) WITHIN GROUP (ORDER BY to_matcher) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY to_matcher) AS p99 FROM t
     UNION ALL SELECT 'matcher_to_delivery_row', percentile_cont(0.5) WITHIN GROUP (ORDER BY to_delivery), percentile_cont(0.99) WITHIN GROUP (ORDER BY to_delivery) FROM t
     UNION ALL SELECT 'delivery_row_to_sent', percentile_cont(0.5) WITHIN GROUP (ORDER BY to_sent), percentile_cont(0.99) WITHIN GROUP (ORDER BY to_sent) FROM t`,
    [measuredIds],
  );
  const stages = Object.fromEntries(stageRows.map((row) => [row.stage, { p50_ms: round(Number(row.p50), 1), p99_ms: round(Number(row.p99), 1) }]));
  await stopChild(res, server);
  log(`stages p50/p99 (ms): ${Object.entries(stages).map(([stage, v]) => `${stage} ${v.p50_ms}/${v.p99_ms}`).join(', ')}`);

  const p50 = percentile(latencies, 0.5);
  const p95 = percentile(latencies, 0.95);
  const p99 = percentile(latencies, 0.99);
  const ok = !timedOut && missing === 0 && errors.length === errorsBefore && latencies.length === measuredCount;
  log(`202 → SMTP accept over ${latencies.length} events: p50 ${round(p50, 1)} ms, p95 ${round(p95, 1)} ms, p99 ${round(p99, 1)} ms, max ${round(latencies.at(-1) ?? NaN, 1)} ms`);
  return {
    measures: {
      instant_p50: limitMeasure('instant 202→accept p50', 'ms', p50, 50, ok),
      instant_p95: { ...limitMeasure('instant 202→accept p95', 'ms', p95, Infinity, ok), target: '(reported)' },
      instant_p99: limitMeasure('instant 202→accept p99', 'ms', p99, 250, ok),
    },
    details: {
      rate_per_sec: INSTANT_RATE,
      events: measuredCount,
      warmup_events: INSTANT_WARMUP,
      send_seconds: round(sendSeconds, 2),
      achieved_rate_per_sec: round(measuredCount / sendSeconds, 1),
      // What the process kept up with: e-mails accepted over the time from the first request to the last accept.
      emails_per_sec_sustained: round(latencies.length / ((Math.max(...sink.acceptedAt.values()) - Math.min(...sentAt.values())) / 1000), 1),
      rules: rules.length,
      latency_ms: {
        min: round(latencies[0] ?? NaN, 1),
        p50: round(p50, 1),
        p90: round(percentile(latencies, 0.9), 1),
        p95: round(p95, 1),
        p99: round(p99, 1),
        max: round(latencies.at(-1) ?? NaN, 1),
        mean: round(latencies.reduce((a, b) => a + b, 0) / latencies.length, 1),
      },
      stages_ms: stages,
      ingest_request_ms: { p50: round(percentile(requestMs, 0.5), 1), p99: round(percentile(requestMs, 0.99), 1) },
      emails_accepted: sink.accepted,
      missing_emails: missing,
      request_errors: errors.length - errorsBefore,
      first_error: errors[errorsBefore] ?? null,
      deliveries_sent_total: sent[0]!.n,
      smtp_connections_opened: sink.connections,
      server: 'child process, all roles (api, matcher, scheduler, mailer), defaults: MATCH_CONCURRENCY 2, MAIL_CONCURRENCY 10, SMTP_MAX_CONNECTIONS 5, DATABASE_POOL_SIZE 10',
      measured_from: "the moment the parent receives the 202 to the moment the sink (same process, same clock) has read the message's DATA and accepts it",
    },
  };
}

// ---------------------------------------------------------------------------------
// 4. Digests

async function digestsPart(res: Resources): Promise<PartReport> {
  const { schema, db } = await newSchema(res);
  const random = mulberry32(4);
  const perRule = Math.round(DIGEST_MATCHES / DIGEST_RULES);
  const orgCount = Math.max(1, Math.round(DIGEST_RULES / 50));
  const seedStart = performance.now();
  const orgs = organizations(orgCount, random, 'Digest');
  const members: MemberSeed[] = [];
  const rules: RuleSeed[] = [];
  const events: WireEvent[] = [];
  const matches: MatchSeed[] = [];
  const dueAt = new Date(Date.now() + 7 * 24 * 3600 * 1000);
  for (let k = 0; k < DIGEST_RULES; k++) {
    const o = k % orgCount;
    const org = orgs[o]!;
    const member = { id: randomUUID(), organizationId: org.id, email: `d${k}@digest.bench.example.com` };
    const frequency: Frequency = random() < 0.6 ? 'daily' : 'weekly';
    const scope = randomScope(random);
    const rule: RuleSeed = {
      id: randomUUID(),
      organizationId: org.id,
      name: `Digest ${k}`,
      scope,
      strategy: null,
      frequency,
      ...digestSchedule(frequency, random),
      enabled: true,
      memberIds: [member.id],
    };
    members.push(member);
    rules.push(rule);
    for (let e = 0; e < perRule; e++) {
      const event = wireEvent(random, `d-${k}-${e}`, org.id, scope, o);
      events.push(event);
      matches.push({ ruleId: rule.id, organizationId: org.id, eventId: event.id, periodKey: 'seeded', dueAt });
    }
  }
  await insertOrganizations(db.pool, orgs);
  await insertMembers(db.pool, members);
  await insertRules(db.pool, rules);
  await insertEvents(db.pool, events, new Date());
  await insertPendingMatches(db.pool, matches);
  await db.pool.query('ANALYZE organizations, team_members, notification_rules, notification_rule_members, events, matches');
  log(`seeded ${rules.length} digest rules (1 member each), ${matches.length} pending matches in ${seconds(performance.now() - seedStart)}`);

  const sink = await startSink();
  res.onRelease(() => sink.close());

  const raw = async (): Promise<number> => {
    const child = await res.child('mail-baseline', {
      BENCH_CHILD_MODE: 'mail',
      SMTP_URL: sink.url,
      SMTP_MAX_CONNECTIONS: String(SMTP_MAX_CONNECTIONS),
      BENCH_MAIL_COUNT: String(rules.length),
      BENCH_MAIL_CONCURRENCY: String(MAIL_CONCURRENCY),
      BENCH_MAIL_EVENTS: String(perRule),
    });
    try {
      sink.reset();
      const accepted = sink.waitFor(rules.length, 300_000);
      const done = child.next('done', { timeoutMs: 300_000 });
      const start = performance.now();
      child.send({ type: 'go' });
      const end = await accepted;
      const result = await done;
      if (result.failed) throw new Error(`the nodemailer baseline failed ${result.failed} messages: ${result.firstError}`);
      const rate = rules.length / ((end - start) / 1000);
      log(`raw nodemailer pool: ${round(rate)} e-mails/s (${seconds(end - start)})`);
      return rate;
    } finally {
      await stopChild(res, child);
    }
  };

  const before = await raw();
  const prefix = res.prefix();
  const server = await res.child('digests-all-roles', processEnv(schema, prefix, { SMTP_URL: sink.url }));
  const base = `http://127.0.0.1:${server.ready.port}`;
  sink.reset();
  const connectionsBefore = sink.connections;
  const accepted = sink.waitFor(rules.length, 400_000);
  let flushedMatches = 0;
  let flushedDeliveries = 0;
  const start = performance.now();
  await pooled(rules.length, FLUSH_CONCURRENCY, async (k) => {
    const { status, json } = await postJson(`${base}/admin/v1/notification-rules/${rules[k]!.id}/flush`, ADMIN_TOKEN, undefined);
    if (status !== 202) throw new Error(`flush answered ${status}: ${JSON.stringify(json)}`);
    flushedMatches += json.matches as number;
    flushedDeliveries += json.deliveries as number;
  });
  const flushedAt = performance.now();
  log(`${rules.length} flushes answered in ${seconds(flushedAt - start)} (${sink.accepted} e-mails accepted by then)`);
  let timedOut = false;
  const end = await accepted.catch((error: Error) => {
    timedOut = true;
    log(error.message);
    return performance.now();
  });
  const elapsed = end - start;
  const rate = sink.accepted / (elapsed / 1000);
  log(`flush → e-mails: ${round(rate)} e-mails/s (${seconds(elapsed)})`);
  const connections = sink.connections - connectionsBefore;
  await stopChild(res, server);
  const { rows: statuses } = await db.pool.query<{ status: string; n: number }>('SELECT status::text, count(*)::int AS n FROM deliveries GROUP BY 1');
  const { rows: left } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`);

  const after = await raw();
  const created = statuses.reduce((sum, row) => sum + row.n, 0);
  const sent = statuses.find((row) => row.status === 'sent')?.n ?? 0;
  // A flush answers with the deliveries its own deliverPeriod made; when the scheduler's digest job for the
  // flushed period (due now) gets there first, the e-mail still goes once but the answer says 0.
  const ok = !timedOut && flushedMatches === matches.length && created === rules.length && sent === rules.length && left[0]!.n === 0;
  if (!ok) log(`CHECK FAILED: flushed ${flushedMatches} matches, ${created} deliveries (${sent} sent); ${left[0]!.n} matches still pending`);
  if (flushedDeliveries !== created) log(`note: the flush answers counted ${flushedDeliveries} deliveries, the database has ${created} (the scheduler made the others)`);
  return {
    measures: { digests: ratioMeasure('digests (flush → accept)', 'e-mails/s', rate, [before, after], 0.8, ok) },
    details: {
      rules: rules.length,
      matches: matches.length,
      events_per_email: perRule,
      flush_concurrency: FLUSH_CONCURRENCY,
      flush_seconds: round((flushedAt - start) / 1000, 3),
      seconds: round(elapsed / 1000, 3),
      flushed_matches: flushedMatches,
      deliveries_created: created,
      deliveries_in_flush_answers: flushedDeliveries,
      deliveries_by_status: Object.fromEntries(statuses.map((row) => [row.status, row.n])),
      pending_matches_after: left[0]!.n,
      smtp_connections_opened: connections,
      server: `child process, all roles, defaults: MAIL_CONCURRENCY ${MAIL_CONCURRENCY}, SMTP_MAX_CONNECTIONS ${SMTP_MAX_CONNECTIONS}, DATABASE_POOL_SIZE 10; flushes over HTTP (POST /admin/v1/notification-rules/{id}/flush), ${FLUSH_CONCURRENCY} at a time`,
      baseline: `nodemailer pooled transport in a child process (maxConnections ${SMTP_MAX_CONNECTIONS}, other options as @notify/mail's), ${rules.length} copies of one digest of ${perRule} events rendered once by the real renderer, ${MAIL_CONCURRENCY} in flight, from "go" to the last accept`,
    },
  };
}

// ---------------------------------------------------------------------------------

const PARTS = {
  ingest: { title: '1. ingest', run: ingestPart },
  matching: { title: '2. matching', run: matchingPart },
  instant: { title: '3. instant latency', run: instantPart },
  digests: { title: '4. digests', run: digestsPart },
} as const;
type PartName = keyof typeof PARTS;

function printTable(measures: Measure[]): void {
  const header = ['measure', 'value', 'unit', 'baseline', 'ratio', 'target', 'result'];
  const lines = measures.map((m) => [
    m.label,
    String(m.value),
    m.unit,
    m.baseline === null ? '' : String(m.baseline),
    m.ratio === null ? '' : m.ratio.toFixed(2),
    m.target,
    m.target === '(reported)' ? '' : m.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...lines.map((line) => line[i]!.length)));
  const numeric = new Set([1, 3, 4]);
  const format = (cells: string[]) => cells.map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ');
  console.log(`\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const line of lines) console.log(format(line));
}

async function main(): Promise<number> {
  const wanted = (process.env.BENCH_PARTS ?? Object.keys(PARTS).join(','))
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean) as PartName[];
  for (const part of wanted) if (!(part in PARTS)) throw new Error(`unknown part ${part}; BENCH_PARTS takes ${Object.keys(PARTS).join(',')}`);
  const loadBefore = os.loadavg();
  const startedAt = performance.now();
  const all = new Set<Resources>();
  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void Promise.allSettled([...all].map((res) => res.release())).then(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  console.log(`bench:pipeline — ${wanted.join(', ')} (${os.cpus().length} CPUs, load ${loadBefore.map((value) => round(value, 2)).join(' ')})`);
  const reports: Record<string, PartReport | { error: string }> = {};
  const measures: Measure[] = [];
  for (const name of wanted) {
    const part = PARTS[name];
    console.log(`\n${part.title}`);
    const res = new Resources();
    all.add(res);
    const partStart = performance.now();
    try {
      const report = await part.run(res);
      reports[name] = { ...report, details: { ...report.details, part_seconds: round((performance.now() - partStart) / 1000, 1) } };
      measures.push(...Object.values(report.measures));
    } catch (error) {
      console.error(`  ${name} failed:`, error);
      reports[name] = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    } finally {
      await res.release();
      all.delete(res);
    }
    log(`(${seconds(performance.now() - partStart)}, cleaned up)`);
  }

  const failed = Object.values(reports).some((report) => 'error' in report);
  const allPass = !failed && measures.every((m) => m.pass || m.target === '(reported)');
  const cpus = os.cpus();
  const output = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus.length,
      cpu_model: cpus[0]?.model ?? null,
      memory_gb: round(os.totalmem() / 1024 ** 3, 1),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      load_average_before: loadBefore.map((value) => round(value, 2)),
      load_average_after: os.loadavg().map((value) => round(value, 2)),
      note: 'shared machine: compare ratios, which pair each measure with a baseline taken before and after it in the same run',
    },
    total_seconds: round((performance.now() - startedAt) / 1000, 1),
    parts: wanted,
    measures: Object.fromEntries(Object.values(reports).flatMap((report) => ('measures' in report ? Object.entries(report.measures) : []))),
    details: Object.fromEntries(Object.entries(reports).map(([name, report]) => [name, 'details' in report ? report.details : report])),
    pass: allPass,
  };
  await mkdir(dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(output, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`);

  printTable(measures);
  console.log(`\n${failed ? 'a part failed' : allPass ? 'all targets met' : 'some targets missed'}; ${seconds(performance.now() - startedAt)} in all; written to ${RESULTS_FILE}`);
  if (failed) return 1;
  return allPass || process.env.BENCH_STRICT !== '1' ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error('bench:pipeline failed:', error);
      process.exit(1);
    },
  );
}
