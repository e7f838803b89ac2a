// Part 2 of `npm run bench:pipeline` (bench/pipeline/run.ts): events/s through the matcher role
// with 100,000 rules loaded (2,000 organizations × 50), and the matcher's RSS with them, vs a no-op
// BullMQ worker draining one job per event (same queues, concurrency); then the same events matched
// again with noise control on (10,000 active silences, renotify_after_hours on every rule), against
// the plain run.

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { mb, mulberry32, numberFromEnv, REDIS_URL, round, until } from '../support/common';
import { matchQueueName, FREQUENCIES, jobPolicies, Queues, SCOPES, type Frequency, type Scope } from '../support/notify';
import { newRedis, newSchema, processEnv, stopChild } from '../support/pipeline';
import { deleteKeys, Resources, type Child } from '../support/processes';
import { CommandCpu, cpuSeconds } from '../support/proc';
import { limitMeasure, log, ratioMeasure, seconds, type PartReport } from '../support/report';
import { digestSchedule, insertEvents, insertMembers, insertOrganizations, insertRules, organizations, randomScope, STRATEGIES, wireEvent, type MemberSeed, type RuleSeed, type WireEvent } from '../support/seed';

const MATCH_ORGS = numberFromEnv('BENCH_MATCH_ORGS', 2000);
const RULES_PER_ORG = numberFromEnv('BENCH_RULES_PER_ORG', 50);
const MEMBERS_PER_ORG = 5;
const MATCH_EVENTS = numberFromEnv('BENCH_MATCH_EVENTS', 50_000);
const FREQUENCY_WEIGHTS: Record<Frequency, number> = { instant: 0.03, hourly: 0.05, daily: 0.5, weekly: 0.37, monthly: 0.05 };
const STRATEGY_SHARE = 0.3;
/** Silences of each organization in the noise-control run (2,000 organizations: 10,000). */
const SILENCES_PER_ORG = 5;
/** The matcher role's default MATCH_CONCURRENCY (per scope queue), used by the baseline too. */
const MATCH_CONCURRENCY = 2;

export async function run(res: Resources): Promise<PartReport> {
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

  // One matcher run over every event, from a fresh start: queues paused while it loads, the clock
  // starts at resume, stops when no event is left unmatched.
  const unmatched = async () => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE matched_at IS NULL')).rows[0]!.n;
  const runMatcher = async (label: string) => {
    const prefix = res.prefix();
    const queues = new Queues({ connection: redis, prefix });
    res.onRelease(() => queues.close());
    await Promise.all([...queues.match.values()].map((queue) => queue.pause()));
    for (const [scope, pairs] of byScope) await queues.requestMatch(scope, pairs);
    const loadStart = performance.now();
    const matcher = await res.child('matcher', processEnv(schema, prefix, { ROLES: 'match' }), 300_000);
    const loaded = matcher.ready.memory;
    log(`${label}: matcher started with ${matcher.ready.rules} rules in ${seconds(performance.now() - loadStart)}: RSS ${mb(loaded.rss)} MB, heap ${mb(loaded.heapUsed)} MB`);
    const [nodeCpuBefore, pgCpu] = [await cpuSeconds(matcher.pid), CommandCpu.begin('postgres')];
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
    const cpu = { matcher: round((await cpuSeconds(matcher.pid)) - nodeCpuBefore, 2), postgres: round(pgCpu.stop(), 2) };
    const after = await matcher.next('memory', { send: { type: 'memory' } });
    log(`${label}: ${round(rate)} events/s (${seconds(elapsed)}); RSS ${mb(after.memory.rss)} MB, peak ${after.memory.peakRss === null ? '?' : mb(after.memory.peakRss)} MB`);
    let failedJobs = 0;
    for (const queue of queues.match.values()) failedJobs += await queue.getFailedCount();
    await stopChild(res, matcher);
    log(`${label}: CPU ${cpu.matcher} s in the matcher, ${cpu.postgres} s in PostgreSQL (${round((cpu.matcher + cpu.postgres) / events.length * 1e6)} µs an event)`);
    return { rate, elapsed, loaded, after, failedJobs, rules: matcher.ready.rules as number, cpuSeconds: cpu };
  };

  const plain = await runMatcher('matcher');
  const { rate, elapsed, loaded, after, failedJobs } = plain;
  const matcher = { ready: { rules: plain.rules } };
  const { rows: matchRows } = await db.pool.query<{ frequency: string; n: number }>(
    'SELECT r.frequency::text, count(*)::int AS n FROM matches m JOIN notification_rules r ON r.id = m.rule_id GROUP BY 1 ORDER BY 1',
  );
  const deliveries = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries')).rows[0]!.n;
  const left = await unmatched();

  // Noise control on: 10,000 active silences (5 per organization, each covering one asset of its
  // organization, so some matches are silenced) and renotify_after_hours on every rule (every
  // match's finding is looked up and noted). Same events, matched again from scratch; and then once
  // more with noise control off, so that both runs start from the same reset tables (the plain run
  // above started from fresh ones).
  const silences = orgs.flatMap((org, o) =>
    Array.from({ length: SILENCES_PER_ORG }, (_, s) => ({ organizationId: org.id, asset: `host${s}.org${o}.example.com` })),
  );
  const reset = async () => {
    await db.pool.query('TRUNCATE matches, deliveries, rule_findings');
    await db.pool.query('UPDATE events SET matched_at = NULL');
    await db.pool.query('UPDATE notification_rules SET burst_until = NULL');
    // Compact again: the updates above must not leave one run more dead rows to step over than the other.
    await db.pool.query('VACUUM FULL events');
    await db.pool.query('VACUUM ANALYZE events, matches, notification_rules, notification_silences');
  };
  await db.pool.query(
    `INSERT INTO notification_silences (id, organization_id, filters, starts_at, ends_at, comment)
     SELECT gen_random_uuid(), o, jsonb_build_object('must', jsonb_build_array(jsonb_build_object('name', 'asset', 'type', 'eq', 'value', a)), 'should', '[]'::jsonb, 'must_not', '[]'::jsonb),
            now() - interval '1 hour', now() + interval '7 days', 'bench'
       FROM unnest($1::uuid[], $2::text[]) AS s(o, a)`,
    [silences.map((silence) => silence.organizationId), silences.map((silence) => silence.asset)],
  );
  await db.pool.query('UPDATE notification_rules SET renotify_after_hours = 24');
  await reset();
  const noisy = await runMatcher('matcher, 10,000 silences and renotify on');
  const { rows: noisyRows } = await db.pool.query<{ status: string; n: number }>('SELECT status::text, count(*)::int AS n FROM matches GROUP BY 1 ORDER BY 1');
  const noisyLeft = await unmatched();

  await db.pool.query('DELETE FROM notification_silences');
  await db.pool.query('UPDATE notification_rules SET renotify_after_hours = NULL');
  await reset();
  const quiet = await runMatcher('matcher again, noise control off');
  const quietOk = (await unmatched()) === 0 && quiet.failedJobs === 0;

  const after2 = await drain();
  const ok = left === 0 && failedJobs === 0;
  const noisyOk = noisyLeft === 0 && noisy.failedJobs === 0;
  return {
    measures: {
      matching: ratioMeasure(`matching (${rules.length / 1000}k rules)`, 'events/s', rate, [before, after2], 0.7, ok),
      matcher_rss_loaded: limitMeasure('matcher RSS, index loaded', 'MB', mb(loaded.rss), 400),
      matcher_rss_after: limitMeasure('matcher RSS, after matching', 'MB', mb(after.memory.rss), 400),
      // Against the plain matcher from the same reset tables, in the same run: silences and renotify may cost at most 15%.
      matching_noise_control: ratioMeasure('matching, 10k silences + renotify, vs plain', 'events/s', noisy.rate, [quiet.rate], 0.85, noisyOk && quietOk),
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
      noise_control: {
        silences: silences.length,
        renotify_after_hours: 24,
        seconds: round(noisy.elapsed / 1000, 3),
        baseline_seconds: round(quiet.elapsed / 1000, 3),
        cpu_seconds: noisy.cpuSeconds,
        baseline_cpu_seconds: quiet.cpuSeconds,
        matches_by_status: Object.fromEntries(noisyRows.map((row) => [row.status, row.n])),
        failed_jobs: noisy.failedJobs,
        unmatched_after: noisyLeft,
        memory_after_matching: memoryJson(noisy.after.memory),
      },
      server: `child process, ROLES=matcher, MATCH_CONCURRENCY ${MATCH_CONCURRENCY} per scope queue (${SCOPES.length} queues), default DATABASE_POOL_SIZE (10); queues paused while it loads, the clock starts at resume`,
      baseline: `no-op BullMQ workers (${SCOPES.length} scope queues × concurrency ${MATCH_CONCURRENCY}) in a child process draining ${events.length} jobs of one event each (jobPolicies.match), from resume to the last completion`,
    },
  };
}

function memoryJson(memory: { rss: number; heapUsed: number; heapTotal: number; external: number; peakRss: number | null }) {
  return { rss_mb: mb(memory.rss), heap_used_mb: mb(memory.heapUsed), heap_total_mb: mb(memory.heapTotal), external_mb: mb(memory.external), peak_rss_mb: memory.peakRss === null ? null : mb(memory.peakRss) };
}
