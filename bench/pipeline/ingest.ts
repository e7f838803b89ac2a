// Part 1 of `npm run bench:pipeline` (bench/pipeline/run.ts): accepted events/s over HTTP, batches
// of 1,000 (server: api role only), vs BullMQ addBulk of the same events as one job each.

import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { mulberry32, numberFromEnv, percentile, pooled, round } from '../support/common';
import { jobPolicies, Queues } from '../support/notify';
import { INGEST_TOKEN, newRedis, newSchema, postJson, processEnv, stopChild } from '../support/pipeline';
import { deleteKeys, Resources } from '../support/processes';
import { cpuMeter } from '../support/proc';
import { log, ratioMeasure, seconds, type PartReport } from '../support/report';
import { insertOrganizations, organizations, randomScope, wireEvent, type WireEvent } from '../support/seed';

const INGEST_BATCHES = numberFromEnv('BENCH_INGEST_BATCHES', 50);
const INGEST_WARMUP_BATCHES = 5;
const INGEST_BATCH_SIZE = 1000;
const INGEST_CONNECTIONS = numberFromEnv('BENCH_INGEST_CONNECTIONS', 4);
const INGEST_ORGS = 200;

export async function run(res: Resources): Promise<PartReport> {
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
  // The CPU of a 1,000-event batch in ms: seconds per million events, which seconds per 1,000
  // rounded to 0.01 would blur.
  const MS_PER_THOUSAND = 1_000_000;
  const raw = async (): Promise<{ rate: number; cpu: { client: number; redis: number } }> => {
    const prefix = res.prefix();
    const queue = new Queue('events', { connection: redis, prefix, defaultJobOptions: jobPolicies.match });
    try {
      await queue.waitUntilReady();
      const add = (b: number) => queue.addBulk(batches[b]!.map((event) => ({ name: 'event', data: event })));
      await pooled(INGEST_WARMUP_BATCHES, INGEST_CONNECTIONS, async (b) => void (await add(b)));
      // The client is this process: its CPU is the meter's `node` (and `bench`, the same process).
      const cpuSince = await cpuMeter(process.pid);
      const start = performance.now();
      await pooled(INGEST_BATCHES, INGEST_CONNECTIONS, async (b) => void (await add(INGEST_WARMUP_BATCHES + b)));
      const elapsed = performance.now() - start;
      const { node: client, redis: redisCpu } = await cpuSince(measured, MS_PER_THOUSAND);
      const jobs = await queue.getWaitingCount();
      if (jobs !== INGEST_BATCHES * INGEST_BATCH_SIZE + INGEST_WARMUP_BATCHES * INGEST_BATCH_SIZE) throw new Error(`the raw baseline queued ${jobs} jobs`);
      const rate = measured / (elapsed / 1000);
      log(`raw addBulk: ${round(rate)} jobs/s (${seconds(elapsed)}); CPU ms per 1,000 events: the client ${client}, Redis ${redisCpu}`);
      return { rate, cpu: { client, redis: redisCpu } };
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
  const cpuSince = await cpuMeter(server.pid);
  const start = performance.now();
  await pooled(INGEST_BATCHES, INGEST_CONNECTIONS, (b) => post(INGEST_WARMUP_BATCHES + b, true));
  const elapsed = performance.now() - start;
  const cpu = await cpuSince(accepted, MS_PER_THOUSAND);
  const rate = accepted / (elapsed / 1000);
  log(`HTTP ingest: ${round(rate)} events/s (${seconds(elapsed)}); CPU ms per 1,000 events: ours ${cpu.node}, PostgreSQL ${cpu.postgres}, Redis ${cpu.redis}, the bench ${cpu.bench}`);
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
    measures: { ingest: ratioMeasure('ingest (HTTP, 1,000/batch)', 'events/s', rate, [before.rate, after.rate], 0.5, ok) },
    details: {
      batches: INGEST_BATCHES,
      warmup_batches: INGEST_WARMUP_BATCHES,
      batch_size: INGEST_BATCH_SIZE,
      connections: INGEST_CONNECTIONS,
      organizations: INGEST_ORGS,
      body_kib: round(bodies[0]!.length / 1024),
      seconds: round(elapsed / 1000, 3),
      cpu_ms_per_1000_events: cpu,
      baseline_cpu_ms_per_1000_events: [before.cpu, after.cpu],
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
