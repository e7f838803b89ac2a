import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUE_MATCHES_READ_PER_PERIOD, findDuePeriods } from '@notify/db';
import { DUE_PERIODS_PAGE } from '@notify/pipeline';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { createTestDatabase } from '../support/database';
import { startPipeline, type PipelineHarness } from '../support/pipeline';

describe('findDuePeriods: the periods whose pending matches are due, longest due first', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const org = randomUUID();
  const rules = [randomUUID(), randomUUID(), randomUUID()];
  const now = new Date('2026-11-26T09:00:00Z');
  const minutesBefore = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) SELECT unnest($1::uuid[]), $2, 'r', 'asset_dns_changed', 'daily', 9`, [rules, org]);
  });
  afterAll(async () => {
    await db.drop();
  });

  /** `count` pending matches of (rule, period) due at `dueAt`, each of an event of its own. */
  async function pending(rule: string, periodKey: string, dueAt: Date, count: number, status = 'pending'): Promise<void> {
    const ids = Array.from({ length: count }, () => randomUUID());
    await db.pool.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, matched_at) SELECT $1, unnest($2::text[]), 'asset_dns_changed', now(), 'a.example', 't', now()`, [org, ids]);
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status)
       SELECT $1::uuid, $2::uuid, e.id, e.received_at, $4::text, $5::timestamptz, $6::match_status FROM events e WHERE e.organization_id = $2::uuid AND e.id = ANY($3::text[])`,
      [rule, org, ids, periodKey, dueAt, status],
    );
  }

  it('orders them by their earliest due match, leaves out those not due or not pending, and stops at the limit', async () => {
    await pending(rules[0]!, 'a', minutesBefore(5), 3);
    await pending(rules[1]!, 'b', minutesBefore(30), 2);
    await pending(rules[0]!, 'a', minutesBefore(60), 1); // the same period, due earlier: its earliest counts
    await pending(rules[2]!, 'c', new Date(now.getTime() + 60_000), 4); // not due yet
    await pending(rules[2]!, 'd', minutesBefore(90), 2, 'delivered');
    expect(await findDuePeriods(db, now, 10)).toEqual([{ ruleId: rules[0], periodKey: 'a' }, { ruleId: rules[1], periodKey: 'b' }]);
    expect(await findDuePeriods(db, now, 1)).toEqual([{ ruleId: rules[0], periodKey: 'a' }]);
  });

  it('finds the longest due period even when it has more matches than a call reads, and the others on the next calls', async () => {
    await db.pool.query('DELETE FROM matches');
    // A call with a limit of 2 reads no further than the first period's matches.
    await pending(rules[0]!, 'big', minutesBefore(120), 2 * DUE_MATCHES_READ_PER_PERIOD + 1);
    await pending(rules[1]!, 'small', minutesBefore(100), 1);
    expect(await findDuePeriods(db, now, 2)).toEqual([{ ruleId: rules[0], periodKey: 'big' }]);
    await db.pool.query(`UPDATE matches SET status = 'delivered' WHERE period_key = 'big'`);
    expect(await findDuePeriods(db, now, 2)).toEqual([{ ruleId: rules[1], periodKey: 'small' }]);
  });
});

describe('the schedule stage: a tick goes on while it finds full pages of due periods', () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  const TICK_MS = 4000;
  const PERIODS = 2 * DUE_PERIODS_PAGE + DUE_PERIODS_PAGE / 2;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    // The reconciler, which asks for due periods too, kept out of it.
    p = await startPipeline(smtp, { SCHEDULER_TICK_MS: String(TICK_MS), RECONCILE_INTERVAL_MS: '600000' });
  });
  afterAll(async () => {
    await p?.stop();
    await smtp?.close();
  });

  it('delivers two and a half pages of periods due at once within one tick, not a page a tick', async () => {
    const org = randomUUID();
    const rules = Array.from({ length: PERIODS }, () => randomUUID());
    const client = await p.db.pool.connect();
    try {
      // Rules without members: their periods are delivered (the matches dropped) without e-mails. All
      // made due at once, in one transaction.
      await client.query('BEGIN');
      await client.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
      await client.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) SELECT unnest($1::uuid[]), $2, 'r', 'asset_dns_changed', 'daily', 9`, [rules, org]);
      await client.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, matched_at) SELECT $1, r::text, 'asset_dns_changed', now(), 'a.example', 't', now() FROM unnest($2::uuid[]) AS r`, [org, rules]);
      await client.query(
        `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status)
         SELECT e.id::uuid, e.organization_id, e.id, e.received_at, 'p', now() - interval '1 minute', 'pending' FROM events e WHERE e.organization_id = $1`,
        [org],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const pending = async () => (await p.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`)).rows[0]!.n;
    let firstAt: number | undefined;
    const deadline = Date.now() + 4 * TICK_MS;
    let left = PERIODS;
    while (left > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      left = await pending();
      if (left < PERIODS) firstAt ??= Date.now();
    }
    expect(left).toBe(0);
    // A page a tick took two more ticks after the first page (8 s).
    expect(Date.now() - firstAt!).toBeLessThan(TICK_MS);
    const { rows } = await p.db.pool.query<{ status: string; n: number }>(`SELECT status::text, count(*)::int AS n FROM matches GROUP BY 1`);
    expect(rows).toEqual([{ status: 'dropped', n: PERIODS }]);
  }, 30_000);
});
