import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverStage, sendQueue, type PipelineResources } from '@notify/pipeline';
import { createRedis, Queues } from '@notify/queues';
import { createTestDatabase, REDIS_URL } from '../support/database';
import { recordingSender } from '../support/sender';

describe('deliverPeriods: one delivery per member and period, whatever asks twice', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let ctx: PipelineResources;
  /** The deliver stage, its deliveries to the send queue. */
  let stage: DeliverStage;
  let redis: ReturnType<typeof createRedis>;
  const org = randomUUID();
  const rule = randomUUID();
  const members = [randomUUID(), randomUUID()];
  const KEY = '20261122T090000Z';

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createRedis(REDIS_URL, 'test-deliver-period');
    ctx = { db, queues: new Queues({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` }), now: () => new Date() };
    stage = new DeliverStage(ctx, sendQueue(ctx));
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $3, 'a@x.example'), ($2, $3, 'b@x.example')`, [...members, org]);
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, 'r', 'asset_dns_changed', 'daily', 9)`, [rule, org]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT $1, unnest($2::uuid[])`, [rule, members]);
  });
  afterAll(async () => {
    await ctx.queues.close();
    redis.disconnect();
    await db.drop();
  });

  async function match(eventId: string, periodKey = KEY): Promise<void> {
    await db.pool.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, matched_at) VALUES ($1, $2, 'asset_dns_changed', now(), 'a.example', 't', now())`, [org, eventId]);
    await db.pool.query(`INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
       SELECT $1::uuid, $2::uuid, $3::text, received_at, $4::text, now() FROM events WHERE organization_id = $2::uuid AND id = $3::text`, [rule, org, eventId, periodKey]);
  }
  const deliveries = async () =>
    (await db.pool.query<{ period_key: string; event_count: number; team_member_id: string; first_event_at: Date }>(
      `SELECT period_key, event_count, team_member_id, first_event_at FROM deliveries WHERE rule_id = $1 ORDER BY created_at, period_key`, [rule])).rows;

  it('creates one delivery per member, with its events counted from the first one received, and asking again creates nothing', async () => {
    await match('e1');
    await match('e2');
    await db.pool.query(`UPDATE events SET received_at = received_at - interval '1 hour' WHERE organization_id = $1 AND id = 'e1'`, [org]);
    await db.pool.query(`UPDATE matches SET event_received_at = event_received_at - interval '1 hour' WHERE organization_id = $1 AND event_id = 'e1'`, [org]);
    const { rows: [first] } = await db.pool.query<{ received_at: Date }>(`SELECT min(received_at) AS received_at FROM events WHERE organization_id = $1 AND id IN ('e1', 'e2')`, [org]);
    expect(await stage.deliverPeriods([{ ruleId: rule, periodKey: KEY }])).toHaveLength(2);
    expect(await stage.deliverPeriods([{ ruleId: rule, periodKey: KEY }])).toEqual([]);
    const rows = await deliveries();
    expect(rows.map((row) => row.team_member_id).sort()).toEqual([...members].sort());
    expect(rows.every((row) => row.period_key === KEY && row.event_count === 2)).toBe(true);
    expect(rows.map((row) => row.first_event_at.getTime())).toEqual([first!.received_at.getTime(), first!.received_at.getTime()]);
  });

  it('gives matches that arrive after their period was delivered a period of their own', async () => {
    await match('late');
    expect(await stage.deliverPeriods([{ ruleId: rule, periodKey: KEY }])).toHaveLength(2);
    const late = (await deliveries()).filter((row) => row.period_key !== KEY);
    expect(late).toHaveLength(2);
    expect(late[0]!.period_key.startsWith(`${KEY}~`)).toBe(true);
    expect(late.every((row) => row.event_count === 1)).toBe(true);
  });

  it('delivers many periods in one call: a fresh one, a late one, one asked twice, and one of a rule that is gone', async () => {
    await match('m-fresh', 'k-fresh');
    await match('m-late'); // KEY was delivered above: this match goes in a late round of its own
    const created = await stage.deliverPeriods([
      { ruleId: rule, periodKey: 'k-fresh' },
      { ruleId: rule, periodKey: KEY },
      { ruleId: rule, periodKey: 'k-fresh' },
      { ruleId: randomUUID(), periodKey: KEY },
    ]);
    expect(created).toHaveLength(4);
    const rows = (await deliveries()).filter((row) => row.period_key === 'k-fresh' || (row.period_key.startsWith(`${KEY}~`) && row.event_count === 1));
    expect(rows.filter((row) => row.period_key === 'k-fresh')).toHaveLength(2);
    const { rows: lateMatch } = await db.pool.query<{ period_key: string; status: string }>(`SELECT period_key, status FROM matches WHERE event_id = 'm-late'`);
    expect(lateMatch[0]!.status).toBe('delivered');
    expect(lateMatch[0]!.period_key.startsWith(`${KEY}~`)).toBe(true);
    expect(await stage.deliverPeriods([{ ruleId: rule, periodKey: 'k-fresh' }])).toEqual([]);
  });

  it('drops the matches of a disabled rule', async () => {
    await match('off', 'k-off');
    await db.pool.query('UPDATE notification_rules SET enabled = false WHERE id = $1', [rule]);
    try {
      expect(await stage.deliverPeriods([{ ruleId: rule, periodKey: 'k-off' }])).toEqual([]);
      const { rows } = await db.pool.query(`SELECT status FROM matches WHERE event_id = 'off'`);
      expect(rows).toEqual([{ status: 'dropped' }]);
    } finally {
      await db.pool.query('UPDATE notification_rules SET enabled = true WHERE id = $1', [rule]);
    }
  });

  it('flushes every pending period into one delivery per member', async () => {
    await match('f1', 'k1');
    await match('f2', 'k2');
    expect(await stage.flush(rule)).toEqual({ matches: 2, deliveries: 2 });
    expect(await stage.flush(rule)).toEqual({ matches: 0, deliveries: 0 });
  });

  it('flushes asked for at once share a transaction, and each hears of its own rule', async () => {
    const others = [randomUUID(), randomUUID()];
    for (const [i, id] of others.entries()) {
      await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, $3, 'asset_dns_changed', 'weekly', 9)`, [id, org, `other ${i}`]);
      await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) VALUES ($1, $2)`, [id, members[0]]);
    }
    await match('s1', 'k1');
    await match('s2', 'k2');
    await match('s3', 'k3');
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
       SELECT $1::uuid, organization_id, id, received_at, 'w1', now() FROM events WHERE organization_id = $2 AND id IN ('s1', 's2')`,
      [others[0], org],
    );
    const missing = randomUUID();
    // A transaction of flushes reads the clock once (its flush period): counted, one transaction.
    let transactions = 0;
    const counted = new DeliverStage({ ...ctx, now: () => (transactions++, new Date()) }, sendQueue(ctx));
    const [own, again, first, second, unknown] = await Promise.allSettled([
      counted.flush(rule),
      // The same rule in the same batch (its id in capitals) is flushed once.
      counted.flush(rule.toUpperCase()),
      counted.flush(others[0]!),
      counted.flush(others[1]!),
      counted.flush(missing),
    ]);
    expect(transactions).toBe(1);
    const results = [own, again].map((r) => (r.status === 'fulfilled' ? r.value : r.reason));
    expect(results).toContainEqual({ matches: 3, deliveries: 2 });
    expect(results).toContainEqual({ matches: 0, deliveries: 0 });
    expect(first).toEqual({ status: 'fulfilled', value: { matches: 2, deliveries: 1 } });
    expect(second).toEqual({ status: 'fulfilled', value: { matches: 0, deliveries: 0 } });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { message: 'Notification rule not found.' } });
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE rule_id = ANY($1::uuid[]) AND status = 'pending'`, [[rule, ...others]]);
    expect(rows[0]!.n).toBe(0);
  });

  it('takes along the repeats of the periods it flushes, and leaves those of periods delivered before', async () => {
    await match('r-done', 'k-done');
    await match('r-open', 'k-open');
    await match('p-open', 'k-open');
    await db.pool.query(`UPDATE matches SET status = 'repeat' WHERE organization_id = $1 AND event_id IN ('r-done', 'r-open')`, [org]);
    const dueBefore = (await db.pool.query<{ due_at: Date }>(`SELECT due_at FROM matches WHERE organization_id = $1 AND event_id = 'r-open'`, [org])).rows[0]!.due_at;
    expect(await stage.flush(rule)).toEqual({ matches: 1, deliveries: 2 });
    const { rows } = await db.pool.query<{ event_id: string; status: string; period_key: string; due_at: Date }>(
      `SELECT event_id, status, period_key, due_at FROM matches WHERE organization_id = $1 AND event_id IN ('r-done', 'r-open', 'p-open') ORDER BY event_id`, [org]);
    const flushed = rows[0]!.period_key;
    expect(flushed).toMatch(/^f/);
    expect(rows.map(({ event_id, status, period_key }) => ({ event_id, status, period_key }))).toEqual([
      { event_id: 'p-open', status: 'delivered', period_key: flushed },
      { event_id: 'r-done', status: 'repeat', period_key: 'k-done' },
      { event_id: 'r-open', status: 'repeat', period_key: flushed },
    ]);
    // A repeat keeps its own due time; only the taken match is due now.
    expect(rows[2]!.due_at).toEqual(dueBefore);
  });

  /** A deliver stage whose sender has `room`, and what it was handed (recordingSender). */
  function senderWithRoom(room: number) {
    const { toSend, handed } = recordingSender(ctx, room);
    return { here: new DeliverStage(ctx, toSend), handed };
  }
  const statuses = async (ids: string[]) =>
    (await db.pool.query<{ id: string; status: string; attempts: number }>(`SELECT id, status::text, attempts FROM deliveries WHERE id = ANY($1::uuid[])`, [ids])).rows;

  it('hands a due period\'s and a flush\'s deliveries to this process\'s sender claimed, as many as it has room for, claimed ones first', async () => {
    await match('claimed-due', 'k-claimed');
    const one = senderWithRoom(1);
    const made = await one.here.deliverPeriods([{ ruleId: rule, periodKey: 'k-claimed' }]);
    expect(made).toHaveLength(2);
    expect(one.handed).toHaveLength(1);
    expect(one.handed[0]!.claimed).toHaveLength(1);
    expect(one.handed[0]!.ids[0]).toBe(one.handed[0]!.claimed[0]);
    const rows = await statuses(made);
    expect(rows.map((row) => [row.id === one.handed[0]!.claimed[0], row.status, row.attempts]).sort()).toEqual([[false, 'pending', 0], [true, 'sending', 1]]);

    await match('claimed-flush', 'k-flushed');
    const plenty = senderWithRoom(100);
    expect(await plenty.here.flush(rule)).toEqual({ matches: 1, deliveries: 2 });
    expect(plenty.handed[0]!.claimed).toHaveLength(2);
    expect((await statuses(plenty.handed[0]!.ids)).map((row) => [row.status, row.attempts])).toEqual([['sending', 1], ['sending', 1]]);

    // A sender without room gets none claimed.
    await match('claimed-none', 'k-none');
    const none = senderWithRoom(0);
    expect(await none.here.deliverPeriods([{ ruleId: rule, periodKey: 'k-none' }])).toHaveLength(2);
    expect(none.handed[0]!.claimed).toEqual([]);
  });
});
