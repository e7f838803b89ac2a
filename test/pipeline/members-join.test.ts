import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDeliveries, createDeliveries, flushDeliveries, PROBE_MEMBERS_FROM, recordMatches, releaseDeliveries, withTransaction, type MadeDeliveries, type Transaction } from '@notify/db';
import { createTestDatabase } from '../support/database';

// The three statements that make deliveries meet a call's matches with their rules' members in
// one of two ways, chosen by the call's size (MembersJoin in create-deliveries.ts): below
// PROBE_MEMBERS_FROM rules or periods, a scan of the call's members for each match; from it, a
// probe by index. The same matches must make the same deliveries either way: each call is made
// on a scenario of every kind of member and match alone (a scan), then with enough rules of one
// member each beside it to be probed, each in a transaction rolled back.
describe('deliveries are the same whichever way a call meets its members', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const org = randomUUID();
  // 03:00 UTC: inside the quiet hours (22 to 7) of a member in UTC.
  const now = new Date('2026-11-28T03:00:00Z');
  const zoneSince = new Date('2026-11-20T00:00:00Z');

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO organizations (id, name, timezone) VALUES ($1, 'o', 'UTC')`, [org]);
  });
  afterAll(async () => {
    await db.drop();
  });

  let eventNumber = 0;
  async function event(severity = 'low'): Promise<{ id: string; receivedAt: Date }> {
    const id = `e${eventNumber++}`;
    const { rows } = await db.pool.query<{ received_at: Date }>(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, severity) VALUES ($1, $2, 'asset_dns_changed', now(), 'a.example', 't', $3) RETURNING received_at`,
      [org, id, severity],
    );
    return { id, receivedAt: rows[0]!.received_at };
  }
  async function rule(options: { enabled?: boolean; frequency?: string } = {}): Promise<string> {
    const id = randomUUID();
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, enabled) VALUES ($1, $2, 'r', 'asset_dns_changed', $3, $4)`, [
      id, org, options.frequency ?? 'daily', options.enabled ?? true,
    ]);
    return id;
  }
  async function member(ruleIds: string[], options: { timezone?: string; zoneSince?: Date; quiet?: [number, number]; unsubscribed?: boolean } = {}): Promise<string> {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO team_members (id, organization_id, email, timezone, zone_since, quiet_start_hour, quiet_end_hour) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, org, `${id}@x.example`, options.timezone ?? null, options.zoneSince ?? null, options.quiet?.[0] ?? null, options.quiet?.[1] ?? null],
    );
    for (const ruleId of ruleIds) {
      await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id, unsubscribed_at) VALUES ($1, $2, $3)`, [ruleId, id, options.unsubscribed ? now : null]);
    }
    return id;
  }
  async function pending(ruleId: string, periodKey: string, options: { severity?: string; audience?: string; createdAt?: Date } = {}): Promise<void> {
    const { id, receivedAt } = await event(options.severity);
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, audience, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8)`,
      [ruleId, org, id, receivedAt, periodKey, now, options.audience ?? '', options.createdAt ?? now],
    );
  }

  /**
   * Rules of every kind, each with pending matches in period `p`: members plain, opted out, in a
   * zone of their own (matches of the zone made after and before they came into it), with one of
   * their own, in quiet hours (a batch held; one with a critical event, not held); a disabled rule;
   * a rule without members.
   */
  async function scenario(): Promise<string[]> {
    const digest = await rule();
    await member([digest]);
    await member([digest], { unsubscribed: true });
    const inBerlin = await member([digest], { timezone: 'Europe/Berlin', zoneSince });
    await pending(digest, 'p');
    await pending(digest, 'p');
    await pending(digest, 'p', { audience: 'Europe/Berlin', createdAt: new Date('2026-11-25T00:00:00Z') });
    await pending(digest, 'p', { audience: 'Europe/Berlin', createdAt: new Date('2026-11-10T00:00:00Z') });
    await pending(digest, 'p', { audience: `@${inBerlin}` });
    const hourly = await rule({ frequency: 'hourly' });
    await member([hourly], { quiet: [22, 7] });
    await member([hourly]);
    await pending(hourly, 'p');
    await pending(hourly, 'p');
    const critical = await rule({ frequency: 'hourly' });
    await member([critical], { quiet: [22, 7] });
    await pending(critical, 'p', { severity: 'critical' });
    const disabled = await rule({ enabled: false });
    await member([disabled]);
    await pending(disabled, 'p');
    const alone = await rule();
    await pending(alone, 'p');
    return [digest, hourly, critical, disabled, alone];
  }

  /** Rules of one member and one pending match in period `p`: enough beside a scenario to make a call probe its members. */
  async function fillers(): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < PROBE_MEMBERS_FROM; i++) {
      const id = await rule();
      await member([id]);
      await pending(id, 'p');
      ids.push(id);
    }
    return ids;
  }

  /** What a call made for `ruleIds`, read in its transaction: deliveries, and every match's status and period. */
  async function outcome(client: pg.PoolClient, ruleIds: string[]) {
    const deliveries = await client.query(
      `SELECT rule_id, team_member_id, period_key, event_count, email, time_zone, zone_since
         FROM deliveries WHERE rule_id = ANY($1::uuid[]) ORDER BY rule_id, team_member_id`,
      [ruleIds],
    );
    const matches = await client.query(
      `SELECT rule_id, event_id, status::text, audience, period_key FROM matches WHERE rule_id = ANY($1::uuid[]) ORDER BY rule_id, event_id, audience`,
      [ruleIds],
    );
    return { deliveries: deliveries.rows, matches: matches.rows };
  }

  /** Runs `call` in a transaction rolled back, with `scenarioRules` and the statement names it prepared. */
  async function rolledBack(call: (tx: Transaction) => Promise<unknown>, scenarioRules: string[]) {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await call(client as unknown as Transaction);
      const made = await outcome(client, scenarioRules);
      const { rows } = await client.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'notify.%'`);
      await client.query('ROLLBACK');
      return { ...made, statements: rows.map((row) => row.name) };
    } finally {
      client.release(true);
    }
  }

  it('createDeliveries: a scenario of every kind, alone and beside enough periods to probe', async () => {
    const rules = await scenario();
    const extra = await fillers();
    const pairs = (ids: string[]) => ids.map((ruleId) => ({ ruleId, periodKey: 'p' }));
    const scanned = await rolledBack((tx) => createDeliveries(tx, pairs(rules), now), rules);
    const probed = await rolledBack((tx) => createDeliveries(tx, pairs([...rules, ...extra]), now), rules);
    expect(scanned.statements).toEqual(['notify.create-deliveries']);
    expect(probed.statements).toEqual(['notify.create-deliveries-probe']);
    expect(probed.deliveries).toEqual(scanned.deliveries);
    expect(probed.matches).toEqual(scanned.matches);
    // Every kind was there: the plain member gets the 2 matches for everyone, the member in Berlin
    // those, the zone's made since they came into it and their own (4), the one opted out none; a
    // batch held in quiet hours, a critical one not; matches dropped.
    const [digest, hourly, critical] = rules;
    expect(scanned.deliveries.filter((row) => row.rule_id === digest).map((row) => row.event_count).sort()).toEqual([2, 4]);
    expect(scanned.deliveries.filter((row) => row.rule_id === hourly)).toHaveLength(1);
    expect(scanned.matches.filter((row) => row.rule_id === hourly && row.period_key.startsWith('q'))).toHaveLength(2);
    expect(scanned.deliveries.filter((row) => row.rule_id === critical)).toHaveLength(1);
    expect(scanned.matches.filter((row) => row.status === 'dropped')).toHaveLength(2);
  });

  it('flushDeliveries: the same scenario flushed alone and beside enough rules to probe', async () => {
    const rules = await scenario();
    const extra = await fillers();
    const scanned = await rolledBack((tx) => flushDeliveries(tx, rules, `f${now.getTime()}`, now), rules);
    const probed = await rolledBack((tx) => flushDeliveries(tx, [...rules, ...extra], `f${now.getTime()}`, now), rules);
    expect(scanned.statements).toEqual(['notify.flush-deliveries']);
    expect(probed.statements).toEqual(['notify.flush-deliveries-probe']);
    expect(scanned.deliveries.length).toBeGreaterThanOrEqual(4);
    expect(probed.deliveries).toEqual(scanned.deliveries);
    expect(probed.matches).toEqual(scanned.matches);
  });

  it('recordMatches: first matches delivered now, alone and beside enough to probe', async () => {
    const rules = [await rule({ frequency: 'instant' }), await rule({ frequency: 'instant' }), await rule({ frequency: 'instant', enabled: false })];
    await member([rules[0]!]);
    await member([rules[0]!], { unsubscribed: true });
    const quiet = await member([rules[1]!], { quiet: [22, 7] });
    await member([rules[1]!, rules[2]!], { timezone: 'Asia/Tokyo' });
    const extra: string[] = [];
    for (let i = 0; i < PROBE_MEMBERS_FROM; i++) {
      extra.push(await rule({ frequency: 'instant' }));
      await member([extra[i]!]);
    }
    const firstMatches = async (ids: string[]) => {
      const matches = [];
      for (const [i, ruleId] of ids.entries()) {
        const { id, receivedAt } = await event();
        matches.push({ ruleId, organizationId: org, eventId: id, eventReceivedAt: receivedAt, periodKey: `i${i}`, dueAt: now, deliverNow: true });
      }
      return matches;
    };
    const alone = await firstMatches(rules);
    const beside = [...(await firstMatches(extra)), ...alone];
    // The same events for the scenario's rules both times: the calls are rolled back.
    const scanned = await rolledBack((tx) => recordMatches(tx, [], alone, now), rules);
    const probed = await rolledBack((tx) => recordMatches(tx, [], beside, now), rules);
    expect(scanned.statements).toEqual(['notify.record-matches']);
    expect(probed.statements).toEqual(['notify.record-matches-probe']);
    // The member in quiet hours has their alert held; the others get theirs.
    expect(scanned.deliveries.map((row) => row.rule_id).sort()).toEqual([rules[0], rules[1]].sort());
    expect(scanned.matches.filter((row) => row.audience === `@${quiet}`)).toHaveLength(1);
    expect(probed.deliveries).toEqual(scanned.deliveries);
    expect(probed.matches).toEqual(scanned.matches);
  });

  /** A repeat of the scenario's digest rule (`digest`) in `periodKey`, for every member. */
  async function repeat(digest: string, periodKey: string): Promise<void> {
    const { id, receivedAt } = await event();
    await db.pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, audience, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'repeat', '', $6)`,
      [digest, org, id, receivedAt, periodKey, now],
    );
  }

  /**
   * What a call that made deliveries claimed (`make`, with room for `claimUpTo`, 3 events each) answered,
   * checked: the deliveries made claimed are sending with one attempt, the others pending, and each
   * answers as claimDeliveries answers it once given back. Returns the claimed ones.
   */
  async function claimedAsClaimed(make: (claims: { claimUpTo: number; eventLimit: number }) => Promise<MadeDeliveries>, claimUpTo: number) {
    const { deliveries, claimed } = await make({ claimUpTo, eventLimit: 3 });
    expect(deliveries.length).toBeGreaterThanOrEqual(4);
    expect(claimed).toHaveLength(Math.min(claimUpTo, deliveries.length));
    const ids = deliveries.map((delivery) => delivery.id);
    const { rows } = await db.pool.query<{ id: string; status: string; attempts: number }>(`SELECT id, status::text, attempts FROM deliveries WHERE id = ANY($1::uuid[])`, [ids]);
    const claimedIds = new Set(claimed.map((delivery) => delivery.id));
    for (const row of rows) expect([row.status, row.attempts]).toEqual(claimedIds.has(row.id) ? ['sending', 1] : ['pending', 0]);
    // Given back and claimed by the send stage's statement: the same answers.
    await releaseDeliveries(db, [...claimedIds]);
    const again = await claimDeliveries(db, [...claimedIds], 30_000, 3);
    for (const delivery of claimed) expect(delivery).toEqual({ ...again.get(delivery.id) });
    return claimed;
  }

  // Last: these commit, on the pool's connections (the calls above check what theirs prepared).
  it('flushDeliveries and createDeliveries with claims: the deliveries made claimed answer as claimDeliveries would, repeats and the event limit too', async () => {
    // A repeat in the period, counted for every member; a period with repeats only stays.
    const flushed = await scenario();
    await repeat(flushed[0]!, 'p');
    await repeat(flushed[0]!, 'only-repeats');
    const flush = (rules: string[], key: string) => (claims: { claimUpTo: number; eventLimit: number }) =>
      withTransaction(db, (tx) => flushDeliveries(tx, rules, key, now, claims));
    const claimed = await claimedAsClaimed(flush(flushed, `f${now.getTime()}`), 100);
    // The member in Berlin has 4 events (3 shown), everyone of the digest the repeat moved along.
    const ofDigest = claimed.filter((delivery) => delivery.rule_id === flushed[0]);
    expect(ofDigest.map((delivery) => [delivery.events_shown, delivery.repeats]).sort()).toEqual([[2, 1], [3, 1]]);
    expect(JSON.parse(ofDigest.find((delivery) => delivery.events_shown === 3)!.events)).toHaveLength(3);
    // Room for one: one made claimed, the others pending for a claim of their own.
    await claimedAsClaimed(flush(await scenario(), `f${now.getTime() + 1}`), 1);

    const due = await scenario();
    await repeat(due[0]!, 'p');
    const create = (rules: string[]) => (claims: { claimUpTo: number; eventLimit: number }) =>
      withTransaction(db, (tx) => createDeliveries(tx, rules.map((ruleId) => ({ ruleId, periodKey: 'p' })), now, claims));
    const made = await claimedAsClaimed(create(due), 100);
    expect(made.filter((delivery) => delivery.rule_id === due[0]).map((delivery) => [delivery.events_shown, delivery.repeats]).sort()).toEqual([[2, 1], [3, 1]]);
    await claimedAsClaimed(create(await scenario()), 1);
  });
});
