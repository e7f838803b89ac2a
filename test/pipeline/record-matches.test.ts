import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingKey } from '@notify/core';
import { claimDeliveries, noticeFindings, recordMatches, releaseDeliveries, withTransaction, type NewMatch } from '@notify/db';
import { createTestDatabase } from '../support/database';

// The match stage's two statements that answer one character per row given: which matches were
// recorded (not there before) and which findings were news.
describe('recordMatches and noticeFindings answer for each row given, in order', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const org = randomUUID();
  const rules = [randomUUID(), randomUUID()];
  // Scanner-chosen ids travel as text: array syntax must not bend them.
  const eventIds = ['plain', 'with,comma', 'with "quote" and \\backslash', '{braces}', 'NULL'];
  const receivedAt = new Map<string, Date>();

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
    await db.pool.query(
      `INSERT INTO notification_rules (id, organization_id, name, scope, frequency, renotify_after_hours)
       SELECT unnest($1::uuid[]), $2, 'r', 'asset_dns_changed', 'instant', 24`,
      [rules, org],
    );
    const { rows } = await db.pool.query<{ id: string; received_at: Date }>(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, title)
       SELECT $1, unnest($2::text[]), 'asset_dns_changed', now(), 'a.example', 't' RETURNING id, received_at`,
      [org, eventIds],
    );
    for (const row of rows) receivedAt.set(row.id, row.received_at);
  });
  afterAll(async () => {
    await db.drop();
  });

  const match = (ruleId: string, eventId: string, extra: Partial<NewMatch> = {}): NewMatch => ({
    ruleId, organizationId: org, eventId, eventReceivedAt: receivedAt.get(eventId)!, periodKey: 'k', dueAt: new Date(), ...extra,
  });

  it('returns the matches it recorded, status filled in, and leaves those recorded before as they were', async () => {
    const now = new Date();
    const first = [match(rules[0]!, 'plain'), match(rules[0]!, 'with,comma', { status: 'repeat' })];
    const { matches: recorded } = await withTransaction(db, (tx) => recordMatches(tx, [], first, now));
    expect(recorded.map((m) => [m.eventId, m.status])).toEqual([['plain', 'pending'], ['with,comma', 'repeat']]);

    // Again, with three new ones between the two old ones: only the new come back, in order.
    const again = [
      match(rules[0]!, 'plain'),
      match(rules[1]!, 'plain', { audience: 'Europe/Berlin' }),
      ...eventIds.slice(2).map((id) => match(rules[0]!, id, { audience: '' })),
      match(rules[0]!, 'with,comma'),
    ];
    const { matches: second } = await withTransaction(db, (tx) => recordMatches(tx, [], again, now));
    expect(second.map((m) => [m.ruleId, m.eventId, m.audience])).toEqual([
      [rules[1], 'plain', 'Europe/Berlin'],
      ...eventIds.slice(2).map((id) => [rules[0], id, '']),
    ]);
    const { rows } = await db.pool.query<{ event_id: string; status: string }>(`SELECT event_id, status::text FROM matches WHERE rule_id = $1`, [rules[0]]);
    const byEvent = Object.fromEntries(rows.map((row) => [row.event_id, row.status]));
    expect(byEvent).toEqual(Object.fromEntries(eventIds.map((id) => [id, id === 'with,comma' ? 'repeat' : 'pending'])));
  });

  it('marks the events it is given matched, with their matches or without any', async () => {
    const now = new Date('2026-11-25T12:00:00.123Z');
    const events = [...receivedAt].map(([id, received]) => ({ organization_id: org, id, received_at: received }));
    await withTransaction(db, (tx) => recordMatches(tx, events.slice(0, 2), [], now));
    const matchedAt = async () =>
      Object.fromEntries((await db.pool.query<{ id: string; matched_at: Date | null }>(`SELECT id, matched_at FROM events WHERE organization_id = $1`, [org])).rows.map((row) => [row.id, row.matched_at?.toISOString() ?? null]));
    expect(Object.values(await matchedAt()).filter((at) => at === now.toISOString())).toHaveLength(2);

    const rest = events.slice(2);
    const { matches: recorded } = await withTransaction(db, (tx) => recordMatches(tx, rest, [match(rules[1]!, rest[0]!.id)], now));
    expect(recorded).toHaveLength(1);
    expect(Object.values(await matchedAt())).toEqual(eventIds.map(() => now.toISOString()));
  });

  it('tells which findings are news, position by position, and a finding is news again after renotify_after_hours', async () => {
    const keys = eventIds.map((id) => findingKey({ scope: 'asset_dns_changed', asset: 'a.example', title: id }));
    const at = new Date('2026-11-25T12:00:00Z');
    const first = await withTransaction(db, (tx) => noticeFindings(tx, keys.slice(0, 2).map((findingKey) => ({ ruleId: rules[0]!, findingKey })), at));
    expect(first).toEqual([true, true]);

    const mixed = [...keys.map((findingKey) => ({ ruleId: rules[0]!, findingKey })), { ruleId: rules[1]!, findingKey: keys[0]! }];
    const later = new Date(at.getTime() + 3_600_000);
    expect(await withTransaction(db, (tx) => noticeFindings(tx, mixed, later))).toEqual([false, false, true, true, true, true]);

    const dayAfter = new Date(at.getTime() + 24 * 3_600_000);
    expect(await withTransaction(db, (tx) => noticeFindings(tx, mixed.slice(0, 3), dayAfter))).toEqual([true, true, false]);
  });

  it('delivers a match to deliver now in the same statement: one delivery per subscribed member, the match delivered; dropped without members', async () => {
    const [withMembers, withoutMembers] = [randomUUID(), randomUUID()];
    const members = [randomUUID(), randomUUID()];
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope) SELECT unnest($1::uuid[]), $2, 'r', 'asset_dns_changed'`, [[withMembers, withoutMembers], org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) SELECT unnest($1::uuid[]), $2, unnest($3::text[])`, [members, org, ['a@x.example', 'b@x.example']]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT $1, unnest($2::uuid[])`, [withMembers, members]);
    const now = new Date();
    const given = [
      match(withMembers, 'plain', { periodKey: 'i1', deliverNow: true }),
      match(withMembers, 'with,comma', { periodKey: 'b1' }),
      match(withoutMembers, 'plain', { periodKey: 'i2', deliverNow: true }),
    ];
    const { matches, deliveryIds } = await withTransaction(db, (tx) => recordMatches(tx, [], given, now));
    expect(matches).toHaveLength(3);
    expect(deliveryIds).toHaveLength(2);
    const { rows } = await db.pool.query<{ rule_id: string; team_member_id: string; period_key: string; event_count: number; email: string }>(
      `SELECT rule_id, team_member_id, period_key, event_count, email FROM deliveries WHERE id = ANY($1::uuid[]) ORDER BY email`, [deliveryIds]);
    expect(rows).toEqual([
      { rule_id: withMembers, team_member_id: members[0], period_key: 'i1', event_count: 1, email: 'a@x.example' },
      { rule_id: withMembers, team_member_id: members[1], period_key: 'i1', event_count: 1, email: 'b@x.example' },
    ]);
    const statuses = await db.pool.query<{ rule_id: string; event_id: string; status: string }>(
      `SELECT rule_id, event_id, status::text FROM matches WHERE rule_id = ANY($1::uuid[]) ORDER BY rule_id = $2 DESC, event_id DESC`, [[withMembers, withoutMembers], withMembers]);
    expect(statuses.rows.map((row) => [row.rule_id, row.event_id, row.status])).toEqual([
      [withMembers, 'with,comma', 'pending'],
      [withMembers, 'plain', 'delivered'],
      [withoutMembers, 'plain', 'dropped'],
    ]);
    // Recorded before: nothing again, and no second delivery.
    const again = await withTransaction(db, (tx) => recordMatches(tx, [], given.slice(0, 1), now));
    expect(again).toEqual({ matches: [], deliveryIds: [], claimed: [] });
  });

  it('with claimUpTo, makes that many deliveries claimed (sending, one attempt) and answers each as claimDeliveries would', async () => {
    const rule = randomUUID();
    const members = [randomUUID(), randomUUID()];
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope) VALUES ($1, $2, 'claimed at once', 'asset_dns_changed')`, [rule, org]);
    await db.pool.query(
      `INSERT INTO team_members (id, organization_id, email, name, timezone, bouncing_since) SELECT unnest($1::uuid[]), $2, unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::timestamptz[])`,
      [members, org, ['c@x.example', 'd@x.example'], ['Cee', null], ['Asia/Tokyo', null], [null, new Date()]],
    );
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT $1, unnest($2::uuid[])`, [rule, members]);
    const now = new Date();
    const { deliveryIds, claimed } = await withTransaction(db, (tx) =>
      recordMatches(tx, [], [match(rule, 'with "quote" and \\backslash', { periodKey: 'i9', deliverNow: true }), match(rule, 'plain', { periodKey: 'b9' })], now, { claimUpTo: 5, eventLimit: 500 }));
    expect(deliveryIds).toHaveLength(2);
    expect(claimed.map((delivery) => delivery.id).sort()).toEqual([...deliveryIds].sort());
    const { rows } = await db.pool.query<{ status: string; attempts: number }>(`SELECT status::text, attempts FROM deliveries WHERE id = ANY($1::uuid[])`, [deliveryIds]);
    expect(rows).toEqual([{ status: 'sending', attempts: 1 }, { status: 'sending', attempts: 1 }]);

    // The same deliveries, given back and claimed by the send stage's statement: the same answers.
    await releaseDeliveries(db, deliveryIds);
    const again = await claimDeliveries(db, deliveryIds, 30_000, 500);
    for (const delivery of claimed) expect(delivery).toEqual({ ...again.get(delivery.id) });
    const byMember = new Map(claimed.map((delivery) => [delivery.team_member_id, delivery]));
    expect(byMember.get(members[0]!)).toMatchObject({ rule_name: 'claimed at once', timezone: 'Asia/Tokyo', member_name: 'Cee', bouncing: false, events_shown: 1, repeats: 0, test: false });
    expect(byMember.get(members[1]!)).toMatchObject({ bouncing: true, member_name: null });
    expect(JSON.parse(byMember.get(members[0]!)!.events)).toMatchObject([{ id: 'with "quote" and \\backslash', title: 't', asset: 'a.example' }]);

    // Room for one: one of the two made claimed, the other pending for a claim of its own.
    const { rows: [event] } = await db.pool.query<{ received_at: Date }>(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, title) VALUES ($1, 'room for one', 'asset_dns_changed', now(), 'a.example', 't') RETURNING received_at`, [org]);
    const one = await withTransaction(db, (tx) =>
      recordMatches(tx, [], [{ ...match(rule, 'room for one', { periodKey: 'i10', deliverNow: true }), eventReceivedAt: event!.received_at }], now, { claimUpTo: 1, eventLimit: 500 }));
    expect(one.deliveryIds).toHaveLength(2);
    expect(one.claimed.map((delivery) => delivery.id)).toHaveLength(1);
    const statuses = await db.pool.query<{ id: string; status: string; attempts: number }>(`SELECT id, status::text, attempts FROM deliveries WHERE id = ANY($1::uuid[])`, [one.deliveryIds]);
    expect(statuses.rows.map((row) => row.id === one.claimed[0]!.id ? ['claimed', row.status, row.attempts] : ['not', row.status, row.attempts]).sort()).toEqual([['claimed', 'sending', 1], ['not', 'pending', 0]]);
  });
});
