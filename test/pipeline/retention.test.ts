import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureHistoryPartitions, storeEvents } from '@notify/db';
import { maintainHistory, type PipelineResources } from '@notify/pipeline';
import { createRedis, Queues } from '@notify/queues';
import type { IncomingEvent } from '@notify/core';
import { createTestDatabase, REDIS_URL } from '../support/database';

/**
 * Retention drops whole months of history (events, matches, deliveries) once they are past
 * RETENTION_DAYS, and keeps a month that still holds anything owed. The clock is fixed at
 * 2026-11-24: with 90 days, months that ended by 2026-08-26 (April to July) are past retention.
 */
describe('retention: old months of history dropped by the partition, nothing owed lost', () => {
  const NOW = new Date('2026-11-24T12:00:00Z');
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let ctx: PipelineResources;
  let redis: ReturnType<typeof createRedis>;
  const org = randomUUID();
  const rule = randomUUID();
  const member = randomUUID();

  function event(id: string, asset: string): IncomingEvent {
    return {
      organizationId: org, id, scope: 'asset_dns_changed', occurredAt: new Date('2026-04-01T00:00:00Z'), asset, assetType: 'domain',
      severity: 'low', tags: ['prod'], title: `t ${id}`, summary: null, url: null, fingerprint: null, data: null,
    };
  }
  /** Stores an event as ingest does (the inventory records it), then moves it into the month it arrived in. */
  async function receivedAt(id: string, at: string, options: { matched?: boolean; asset?: string } = {}): Promise<void> {
    expect(await storeEvents(db, [event(id, options.asset ?? `${id}.example`)])).toHaveLength(1);
    await db.pool.query(`UPDATE events SET received_at = $2, matched_at = $3 WHERE organization_id = $1 AND id = $4`, [
      org, at, options.matched === false ? null : at, id,
    ]);
  }
  async function matched(id: string, status: 'pending' | 'delivered', periodKey: string): Promise<void> {
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status)
       SELECT $1, organization_id, id, received_at, $3, received_at, $4::match_status FROM events WHERE organization_id = $2 AND id = $5`,
      [rule, org, periodKey, status, id],
    );
  }
  async function delivered(periodKey: string, createdAt: string, firstEventAt: string, status: 'sent' | 'pending'): Promise<void> {
    await db.pool.query(
      `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, status, event_count, first_event_at, created_at)
       VALUES ($1, $2, $3, 'soc@x.example', $4, $5::delivery_status, 1, $6, $7)`,
      [randomUUID(), rule, member, periodKey, status, firstEventAt, createdAt],
    );
  }
  const partitions = async (table: string) =>
    (await db.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1) ORDER BY 1`,
      [table],
    )).rows.map((row) => row.name);
  const eventIds = async () => (await db.pool.query<{ id: string }>(`SELECT id FROM events ORDER BY id`)).rows.map((row) => row.id);
  const inventory = async () => (await db.pool.query(`SELECT asset, asset_type, tags, scopes, first_seen, last_seen FROM assets ORDER BY asset`)).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createRedis(REDIS_URL, 'test-retention');
    ctx = { db, queues: new Queues({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` }), now: () => NOW };
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $2, 'soc@x.example')`, [member, org]);
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, 'r', 'asset_dns_changed', 'monthly', 9)`, [rule, org]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) VALUES ($1, $2)`, [rule, member]);
    // The months of the fixture, as the schedule role would have created them over time.
    await ensureHistoryPartitions(db, new Date('2026-04-01T00:00:00Z'), 7);
  });
  afterAll(async () => {
    await ctx.queues.close();
    redis.disconnect();
    await db.drop();
  });

  it('drops the months past retention that owe nothing, keeps the others and recent history, and leaves the inventory as it was', async () => {
    // April: matched, delivered and sent, all of it: history only.
    await receivedAt('april-1', '2026-04-10T00:00:00Z');
    await receivedAt('april-2', '2026-04-20T00:00:00Z', { asset: 'shared.example' });
    await matched('april-1', 'delivered', 'p-april');
    await delivered('p-april', '2026-04-11T09:00:00Z', '2026-04-10T00:00:00Z', 'sent');
    // May: a pending match (a digest period not due yet).
    await receivedAt('may-1', '2026-05-10T00:00:00Z');
    await matched('may-1', 'pending', 'p-may');
    // June: an event not matched yet.
    await receivedAt('june-1', '2026-06-10T00:00:00Z', { matched: false });
    // July: its event waits in a delivery made in November and not sent yet.
    await receivedAt('july-1', '2026-07-10T00:00:00Z');
    await matched('july-1', 'delivered', 'p-july');
    await delivered('p-july', '2026-11-20T09:00:00Z', '2026-07-10T00:00:00Z', 'pending');
    // August ends after the horizon (2026-08-26); November is recent.
    await receivedAt('august-1', '2026-08-30T00:00:00Z', { asset: 'shared.example' });
    await receivedAt('november-1', '2026-11-20T00:00:00Z');
    const assetsBefore = await inventory();

    const result = await maintainHistory(ctx, 90);

    expect(result.dropped).toEqual(['2026-04']);
    expect(result.held).toEqual([
      { month: '2026-05', owed: ['pending matches'] },
      { month: '2026-06', owed: ['events not matched yet'] },
      { month: '2026-07', owed: ['deliveries not sent yet'] },
    ]);
    for (const table of ['events', 'matches', 'deliveries']) {
      expect(await partitions(table)).not.toContain(`${table}_p2026_04`);
      expect(await partitions(table)).toContain(`${table}_p2026_05`);
      // Months ahead of the clock exist, so nothing has to land in the default partition.
      expect(await partitions(table)).toContain(`${table}_p2027_01`);
    }
    expect(await eventIds()).toEqual(['august-1', 'july-1', 'june-1', 'may-1', 'november-1']);
    expect((await db.pool.query(`SELECT period_key, status FROM matches ORDER BY period_key`)).rows).toEqual([
      { period_key: 'p-july', status: 'delivered' },
      { period_key: 'p-may', status: 'pending' },
    ]);
    expect((await db.pool.query(`SELECT period_key FROM deliveries`)).rows).toEqual([{ period_key: 'p-july' }]);
    // The inventory keeps its own first and last seen: dropping April's events changes nothing in it.
    expect(await inventory()).toEqual(assetsBefore);

    // Once the owed work is done, the next run drops the months it held.
    await db.pool.query(`UPDATE deliveries SET status = 'sent', sent_at = now()`);
    await db.pool.query(`UPDATE matches SET status = 'delivered'`);
    await db.pool.query(`UPDATE events SET matched_at = received_at`);
    const again = await maintainHistory(ctx, 90);
    expect(again.dropped).toEqual(['2026-05', '2026-06', '2026-07']);
    expect(again.held).toEqual([]);
    expect(await eventIds()).toEqual(['august-1', 'november-1']);
    expect(await inventory()).toEqual(assetsBefore);
  });

  it('keeps ingest idempotent across months: an id stored in an earlier month is not stored again', async () => {
    await receivedAt('resent', '2026-09-15T00:00:00Z');
    expect(await storeEvents(db, [event('resent', 'resent.example')])).toEqual([]);
    expect(await storeEvents(db, [event('resent', 'resent.example')])).toEqual([]);
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE id = 'resent'`);
    expect(rows[0]!.n).toBe(1);
  });

  it('moves rows the default partition took into their month when the month is created', async () => {
    expect(await storeEvents(db, [event('far-ahead', 'ahead.example')])).toHaveLength(1);
    await db.pool.query(`UPDATE events SET received_at = '2027-09-02T00:00:00Z' WHERE id = 'far-ahead'`);
    const where = async () =>
      (await db.pool.query<{ part: string }>(`SELECT tableoid::regclass::text AS part FROM events WHERE id = 'far-ahead'`)).rows[0]!.part;
    expect(await where()).toBe('events_default');
    expect(await ensureHistoryPartitions(db, new Date('2027-08-15T00:00:00Z'), 1)).toEqual(
      expect.arrayContaining(['events_p2027_09', 'matches_p2027_09', 'deliveries_p2027_09']),
    );
    expect(await where()).toBe('events_p2027_09');
    // Its month's own unique index came with it.
    const { rows } = await db.pool.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'events_p2027_09_key'`);
    expect(rows).toHaveLength(1);
  });
});
