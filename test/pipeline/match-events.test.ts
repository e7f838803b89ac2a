import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_AHEAD, MatchStage, RuleIndex } from '@notify/pipeline';
import { createRedis, Queues } from '@notify/queues';
import { createTestDatabase, REDIS_URL, storeUnmatchedEvent } from '../support/database';
import { recordingSender } from '../support/sender';

// The match stage makes the first matches of instant rules deliveries in the statement that records
// them, and makes some of them claimed for the process's sender (no claim statement of their own):
// as many as its sender has room for, and no more than one claim statement takes (CLAIM_AHEAD).
describe('MatchStage: instant deliveries made claimed for this process\'s sender', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: ReturnType<typeof createRedis>;
  let queues: Queues;
  const org = randomUUID();
  const member = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createRedis(REDIS_URL, 'test-match-events');
    queues = new Queues({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` });
    await db.pool.query(`INSERT INTO organizations (id, name, timezone) VALUES ($1, 'o', 'UTC')`, [org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $2, 'a@x.example')`, [member, org]);
  });
  afterAll(async () => {
    await queues.close();
    redis.disconnect();
    await db.drop();
  });

  /** `count` instant rules of a scope of their own, the member subscribed to each, and an index of them. */
  async function instantRules(scope: string, count: number): Promise<RuleIndex> {
    const ids = Array.from({ length: count }, () => randomUUID());
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency) SELECT unnest($1::uuid[]), $2, 'r', $3, 'instant'`, [ids, org, scope]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT unnest($1::uuid[]), $2`, [ids, member]);
    const index = new RuleIndex();
    await index.loadAll(db);
    return index;
  }

  /** The match stage with a sender that has `room`: what it was handed, and each delivery's row. */
  async function matchWithRoom(scope: string, rules: number, room: number) {
    const index = await instantRules(scope, rules);
    const { toSend, handed } = recordingSender({ db, queues }, room);
    const stage = new MatchStage({ db, queues, now: () => new Date() }, { index, instantCoalesceMs: 60_000, toSend });
    const result = await stage.match([await storeUnmatchedEvent(db, org, scope)]);
    const { rows } = await db.pool.query<{ id: string; status: string; attempts: number }>(
      `SELECT d.id, d.status::text AS status, d.attempts FROM deliveries d JOIN notification_rules r ON r.id = d.rule_id WHERE r.scope = $1`, [scope]);
    return { result, handed, rows };
  }

  it('makes at most CLAIM_AHEAD of a statement\'s deliveries claimed, however much room the sender has', async () => {
    const { result, handed, rows } = await matchWithRoom('asset_dns_changed', CLAIM_AHEAD + 4, 100);
    expect(result.immediate).toBe(CLAIM_AHEAD + 4);
    expect(rows).toHaveLength(CLAIM_AHEAD + 4);
    const sending = rows.filter((row) => row.status === 'sending');
    expect(sending).toHaveLength(CLAIM_AHEAD);
    for (const row of sending) expect(row.attempts).toBe(1);
    expect(rows.filter((row) => row.status === 'pending' && row.attempts === 0)).toHaveLength(4);
    // The sender was handed every delivery, the claimed ones first, and told which those are.
    expect(handed).toHaveLength(1);
    expect(handed[0]!.ids).toHaveLength(CLAIM_AHEAD + 4);
    expect(new Set(handed[0]!.claimed)).toEqual(new Set(sending.map((row) => row.id)));
    expect(handed[0]!.ids.slice(0, CLAIM_AHEAD).sort()).toEqual([...handed[0]!.claimed].sort());
  });

  it('makes no more claimed than the sender has room for, and none when it has none', async () => {
    const some = await matchWithRoom('asset_ssl_changed', 6, 2);
    expect(some.rows.filter((row) => row.status === 'sending')).toHaveLength(2);
    expect(some.handed[0]!.claimed).toHaveLength(2);
    const none = await matchWithRoom('new_open_port_detected', 3, 0);
    expect(none.rows.map((row) => row.status)).toEqual(['pending', 'pending', 'pending']);
    expect(none.handed[0]!.claimed).toEqual([]);
  });
});
