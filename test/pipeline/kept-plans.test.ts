import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeGrownTables, createDatabase } from '@notify/db';
import { createEventPublisher, DeliverStage, IngestStage, MatchStage, matchQueue, RuleIndex, sendQueue, type MatchInStore, type PipelineResources } from '@notify/pipeline';
import { createRedis, Queues } from '@notify/queues';
import { createTestDatabase, DATABASE_URL, REDIS_URL, storeUnmatchedEvent } from '../support/database';

// The match, flush and ingest transactions keep one plan per prepared statement (genericPlans): made on a
// session's first call, from the statistics of that moment, and kept until a table it reads is
// analyzed. A session's first calls may come while the month's partitions are empty (a new
// deployment, a process started on the first of the month); made then, a match's plan hashed every
// month of events to mark its few, and a flush's read the rules whole. What makes them find rows
// by index again is the schedule role's statistics keeper (analyzeGrownTables, every 5 s): a
// partition that has grown is analyzed, and the plans that read it are made again. Here all run
// once on one session while the month is empty, the month grows by thousands of rows, the keeper
// takes its round, and the plans of the session's next calls, logged by auto_explain, read none
// of the grown tables whole (the rules' coalescing windows were still read into a hash, all of
// them for a call's few, on statistics of 2,000 rules; their UPDATE now names its ids).
describe('the match, flush and ingest transactions\' kept plans, made while the month was empty, once the month has grown', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let one: ReturnType<typeof createDatabase>;
  let redis: ReturnType<typeof createRedis>;
  let queues: Queues;
  const plans: string[] = [];
  const org = randomUUID();
  const member = randomUUID();
  const instant = randomUUID();
  const daily = randomUUID();
  const SCOPE = 'asset_dns_changed';

  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection: every transaction runs on the session whose plans are explained.
    one = createDatabase({ url: DATABASE_URL, schema: db.schema, poolSize: 1 });
    redis = createRedis(REDIS_URL, 'test-kept-plans');
    queues = new Queues({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` });
    const session = await one.pool.connect();
    try {
      session.on('notice', (notice) => {
        if (notice.message?.includes('Query Text:')) plans.push(notice.message);
      });
      // Every plan the session runs, sent to it as a notice.
      await session.query(`LOAD 'auto_explain'`);
      await session.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.sample_rate = 1; SET auto_explain.log_level = 'notice'; SET client_min_messages = 'notice'`);
    } finally {
      session.release();
    }
    await db.pool.query(`INSERT INTO organizations (id, name, timezone) VALUES ($1, 'o', 'UTC')`, [org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $2, 'a@x.example')`, [member, org]);
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency) VALUES ($1, $3, 'i', $4, 'instant'), ($2, $3, 'd', $4, 'daily')`, [instant, daily, org, SCOPE]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) VALUES ($1, $3), ($2, $3)`, [instant, daily, member]);
  });
  afterAll(async () => {
    await one.close();
    await queues.close();
    redis.disconnect();
    await db.drop();
  });

  /**
   * The three transactions that keep plans: an event matched by both rules (the instant rule's
   * first, `immediate`: a delivery made), the daily rule flushed, then an event ingested and
   * matched in the transaction that stores it (as the ingest route does in a process that runs
   * the match role), and the daily rule flushed again.
   */
  async function matchAndFlush(ctx: PipelineResources, index: RuleIndex, immediate: number): Promise<void> {
    const match = new MatchStage(ctx, { index, instantCoalesceMs: 60_000, toSend: sendQueue(ctx) });
    const deliver = new DeliverStage(ctx, sendQueue(ctx));
    const matched = await match.match([await storeUnmatchedEvent(db, org, SCOPE)]);
    expect(matched).toMatchObject({ events: 1, matches: 2, immediate });
    expect(await deliver.flush(daily)).toEqual({ matches: 1, deliveries: 1 });
    const failures: unknown[] = [];
    // What follows the commit (the metrics, handing over deliveries) runs in the background, as in
    // the worker; awaited below, so that none of it outlives the test and its queues.
    const afterCommit: Array<Promise<unknown>> = [];
    const matchInStore: MatchInStore = {
      open: () => true,
      now: ctx.now,
      match: async (tx, events, now) => {
        const committed = await match.matchStored(tx, events, now);
        return () => void afterCommit.push(committed());
      },
      failed: (error) => failures.push(error),
    };
    const event = { id: `i-${randomBytes(4).toString('hex')}`, organizationId: org, scope: SCOPE, occurredAt: new Date(), asset: 'a.example', title: 't' } as const;
    expect(await createEventPublisher(new IngestStage({ db: ctx.db }, { toMatch: matchQueue({ queues }), matchInStore })).publish(event)).toEqual({ accepted: 1, duplicates: 0 });
    expect(failures).toEqual([]);
    expect(afterCommit).toHaveLength(1);
    await expect(afterCommit[0]).resolves.toMatchObject({ events: 1, matches: 2 });
    expect(await deliver.flush(daily)).toEqual({ matches: 1, deliveries: 1 });
  }

  it('reads none of the grown tables whole once the statistics keeper has analyzed them', async () => {
    const ctx: PipelineResources = { db: one, queues, now: () => new Date() };
    const index = new RuleIndex();
    await index.loadAll(one);
    // The month's partitions are empty: the session's first calls make the plans it keeps.
    await matchAndFlush(ctx, index, 1);

    // The month grows, and the rules: others' events, pending matches and deliveries.
    const others = Array.from({ length: 2000 }, () => randomUUID());
    const grower = await db.pool.connect();
    try {
      await grower.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency) SELECT unnest($1::uuid[]), $2, 'o', 'new_open_port_detected', 'daily'`, [others, org]);
      await grower.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title)
        SELECT $1, 'g' || g, 'new_open_port_detected', now(), 'a.example', 't' FROM generate_series(1, 20000) g`, [org]);
      await grower.query(`INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
        SELECT ($2::uuid[])[1 + g % 2000], $1, e.id, e.received_at, 'p', now() + interval '1 day'
          FROM events e JOIN generate_series(1, 20000) g ON e.organization_id = $1 AND e.id = 'g' || g`, [org, others]);
      await grower.query(`INSERT INTO deliveries (id, rule_id, email, period_key, event_count)
        SELECT gen_random_uuid(), ($1::uuid[])[1 + g % 2000], 'm@example.com', 'p' || g, 1 FROM generate_series(1, 5000) g`, [others]);
      // The session reports its changes to the statistics now, not after up to 10 s idle.
      await grower.query('SELECT pg_stat_force_next_flush()');
    } finally {
      grower.release();
    }

    // The statistics keeper's round: each grown table analyzed (a month's partition is one; their
    // changes reach the statistics asynchronously, within a second or so), which makes the plans
    // that read it again.
    const grown = [/^events_p\d/, /^matches_p\d/, /^deliveries_p\d/, /^notification_rules$/];
    const analyzed = new Set<string>();
    for (let tries = 0; tries < 100 && !grown.every((table) => [...analyzed].some((name) => table.test(name))); tries++) {
      for (const name of await analyzeGrownTables(db)) analyzed.add(name);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tables = [...analyzed].filter((name) => grown.some((table) => table.test(name)));
    expect(tables).toHaveLength(4);

    plans.length = 0;
    // The instant rule's second match joins its coalescing window (no delivery yet).
    await matchAndFlush(ctx, index, 0);
    const text = plans.join('\n');
    // The transactions' statements were explained: the matches recorded, the flush, the events stored to match.
    expect(text).toMatch(/INSERT INTO matches/);
    expect(text).toMatch(/UPDATE matches m SET status = CASE/);
    expect(text).toMatch(/INSERT INTO events/);
    for (const table of tables) {
      expect(text).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
      // The statements read the month's events and matches, and the rules, by index (a flush or a match makes deliveries without reading any).
      if (!table.startsWith('deliveries')) expect(text).toMatch(new RegExp(`(Index|Index Only|Bitmap Index) Scan (using|on) ${table}_\\w+`));
    }
  });
});
