import {
  isUuid,
  LimitReached,
  messages,
  NotFound,
  prepareNewRule,
  prepareRuleChanges,
  ValidationFailed,
  type Filters,
  type Frequency,
  type NewRule,
  type RuleCreateBody,
  type RuleListQuery,
  type RuleUpdateBody,
  type Scope,
} from '@notify/core';
import type { Prisma } from './generated/prisma/client';
import { clientOf, withTransaction, type Database } from './client';
import { pgCode, PG } from './errors';
import { unknownMemberIds } from './members';

export interface RuleMember {
  teamMemberId: string;
  email: string;
  /** False once the member opted out through an e-mail's unsubscribe link. */
  subscribed: boolean;
}

export interface RuleSummary {
  id: string;
  name: string;
  scope: Scope;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  members: RuleMember[];
  enabled: boolean;
  /** A finding is e-mailed again only this many hours after it was last news; null: every match. */
  renotifyAfterHours: number | null;
  addedDate: Date;
  lastUpdateDate: Date;
}

export interface Rule extends RuleSummary {
  organizationId: string;
  strategy: Filters | null;
}

const ruleInclude = {
  members: { include: { teamMember: { select: { id: true, email: true } } } },
} satisfies Prisma.NotificationRuleInclude;

type RuleRow = Prisma.NotificationRuleGetPayload<{ include: typeof ruleInclude }>;

function toRule(row: RuleRow): Rule {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    scope: row.scope,
    strategy: (row.strategy ?? null) as Filters | null,
    frequency: row.frequency,
    deliveryHour: row.deliveryHour,
    deliveryDayOfWeek: row.deliveryDayOfWeek,
    members: row.members
      .map((link) => ({ teamMemberId: link.teamMember.id, email: link.teamMember.email, subscribed: link.unsubscribedAt === null }))
      .sort((a, b) => a.email.localeCompare(b.email)),
    enabled: row.enabled,
    renotifyAfterHours: row.renotifyAfterHours,
    addedDate: row.addedDate,
    lastUpdateDate: row.lastUpdateDate,
  };
}

async function assertMembers(db: Database, organizationId: string, memberIds: string[]): Promise<void> {
  const unknown = await unknownMemberIds(db, organizationId, memberIds);
  if (unknown.length) throw new ValidationFailed([{ param: 'members', details: unknown.map((id) => messages.unknownMember(id)) }]);
}

function memberRaceToValidation(error: unknown): never {
  // A member removed between our check and the insert: the same answer as if it never existed.
  if (pgCode(error) === PG.foreignKeyViolation || (error as { code?: string }).code === 'P2003') {
    throw new ValidationFailed([{ param: 'members', details: ['A member was removed while the rule was being saved.'] }]);
  }
  throw error;
}

interface CreatedRow {
  id: string | null;
  name: string;
  scope: Scope;
  strategy: Filters | null;
  frequency: Frequency;
  delivery_hour: number | null;
  delivery_day_of_week: number | null;
  enabled: boolean;
  renotify_after_hours: number | null;
  added_date: Date;
  last_update_date: Date;
  members: Array<{ team_member_uuid: string; email: string }> | null;
  unknown: string[] | null;
}

/** What a rule create's insert answers: the row made (or none, and why) and the plan's limit. */
interface InsertedRule {
  row: CreatedRow & { limit_reached: boolean };
  maxRules: number;
}

/**
 * Creating rules is a hot path for integrations: one statement checks that every member belongs to
 * the organization and that its plan has room, inserts the rule and its members only if so, and
 * returns the resource (one round trip after the plan's, one commit).
 *
 * The plan's max_rules is exact under any concurrency, and creates far from it run side by side.
 * - Side by side, a create holds its organization's row FOR SHARE and inserts only if fewer than
 *   max_rules − (max_connections + max_prepared_transactions) rules are committed, as counted by
 *   triggers into `rule_counts` (slots, so that concurrent creates seldom share a row; a sum of a
 *   few rows instead of counting the organization's rules). The creates it cannot see are
 *   uncommitted ones, each holding a connection (or a prepared transaction), so committed + in
 *   flight stays within max_rules.
 * - Nearer the limit, a create runs alone: it takes the row FOR NO KEY UPDATE, which waits for the
 *   side-by-side creates in flight to commit and keeps new ones out, and counts the committed rules
 *   themselves (its own statement's fresh snapshot, after the lock; at most max_rules of them). A
 *   trigger count gone wrong (a TRUNCATE bypasses triggers) then only changes which way creates go.
 * Before this, every create ran alone and counted its organization's rules: fifty concurrent creates
 * into an organization of 10,000 rules took turns, 2.9 ms of PostgreSQL each (bench:api).
 * NO KEY UPDATE and SHARE both leave the KEY SHARE locks of foreign keys (other rows' inserts) alone.
 */
export async function createRule(db: Database, organizationId: string, body: RuleCreateBody): Promise<Rule> {
  const rule = prepareNewRule(body);
  let inserted: InsertedRule;
  try {
    inserted = (await insertRule(db, organizationId, rule, 'side by side')) ?? (await insertRule(db, organizationId, rule, 'alone'));
  } catch (error) {
    return memberRaceToValidation(error);
  }
  const { row, maxRules } = inserted;
  // The body's problems come first, as everywhere: a request that could never succeed says why.
  if (!row.unknown?.length && row.limit_reached) {
    throw new LimitReached(
      `This organization has reached its plan's limit of ${maxRules} notification rules. Delete rules it no longer needs, or ask for a larger plan.`,
    );
  }
  if (row.unknown?.length || row.id === null) {
    const unknown = rule.memberIds.filter((id) => row.unknown?.includes(id));
    throw new ValidationFailed([{ param: 'members', details: unknown.map((id) => messages.unknownMember(id)) }]);
  }
  return {
    id: row.id,
    organizationId,
    name: row.name,
    scope: row.scope,
    strategy: row.strategy,
    frequency: row.frequency,
    deliveryHour: row.delivery_hour,
    deliveryDayOfWeek: row.delivery_day_of_week,
    members: (row.members ?? []).map((member) => ({ teamMemberId: member.team_member_uuid, email: member.email, subscribed: true })),
    enabled: row.enabled,
    renotifyAfterHours: row.renotify_after_hours,
    addedDate: row.added_date,
    lastUpdateDate: row.last_update_date,
  };
}

/** Whether the organization ($1) holds $10 rules or more, from the triggers' count (rule_counts): a sum of a few rows. */
const COUNTED_BY_TRIGGERS = 'SELECT COALESCE(sum(rules), 0) >= $10 AS reached FROM rule_counts WHERE organization_id = $1';
/** The same, counted on the rules themselves (at most $10 of them): exact whatever happened to rule_counts. */
const COUNTED_EXACTLY = 'SELECT count(*) >= $10 AS reached FROM (SELECT 1 FROM notification_rules WHERE organization_id = $1 LIMIT $10) r';

/**
 * One attempt of createRule's insert (see there). Side by side, a count at or past its bound
 * inserts nothing and answers null: the create is to run alone, in a transaction of its own
 * (upgrading a SHARE lock that other creates hold too would deadlock them).
 */
function insertRule(db: Database, organizationId: string, rule: NewRule, mode: 'alone'): Promise<InsertedRule>;
function insertRule(db: Database, organizationId: string, rule: NewRule, mode: 'side by side'): Promise<InsertedRule | null>;
async function insertRule(db: Database, organizationId: string, rule: NewRule, mode: 'side by side' | 'alone'): Promise<InsertedRule | null> {
  return withTransaction(db, async (tx) => {
    const client = clientOf(tx);
    const { rows: plan } = await client.query<{ max_rules: number; in_flight: number }>(
      `SELECT max_rules, current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int AS in_flight
         FROM organizations WHERE id = $1 ${mode === 'alone' ? 'FOR NO KEY UPDATE' : 'FOR SHARE'}`,
      [organizationId],
    );
    const maxRules = plan[0]?.max_rules ?? 0;
    // The count the insert needs to stay under (never below zero: it is a LIMIT too).
    const bound = mode === 'alone' ? Math.max(maxRules, 0) : maxRules - (plan[0]?.in_flight ?? 0);
    if (mode === 'side by side' && bound <= 0) return null;
    const { rows } = await client.query<InsertedRule['row']>(
      `WITH wanted AS (SELECT DISTINCT unnest($2::uuid[]) AS id),
            known AS (SELECT t.id, t.email FROM team_members t JOIN wanted w ON w.id = t.id WHERE t.organization_id = $1),
            held AS (${mode === 'alone' ? COUNTED_EXACTLY : COUNTED_BY_TRIGGERS}),
            rule AS (
              INSERT INTO notification_rules (id, organization_id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, renotify_after_hours)
              SELECT gen_random_uuid(), $1, $3, $4::scope, $5::jsonb, $6::frequency, $7, $8, $9, $11
               WHERE (SELECT count(*) FROM known) = (SELECT count(*) FROM wanted) AND NOT (SELECT reached FROM held)
              RETURNING id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled, renotify_after_hours, added_date, last_update_date
            ),
            links AS (
              INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT rule.id, known.id FROM rule, known
            )
       SELECT rule.*,
              (SELECT json_agg(json_build_object('team_member_uuid', k.id, 'email', k.email) ORDER BY k.email) FROM known k) AS members,
              (SELECT array_agg(w.id) FROM wanted w WHERE w.id NOT IN (SELECT id FROM known)) AS unknown,
              (SELECT reached FROM held) AS limit_reached
         FROM (SELECT 1) AS one LEFT JOIN rule ON true`,
      [
        organizationId,
        rule.memberIds,
        rule.name,
        rule.scope,
        rule.strategy === null ? null : JSON.stringify(rule.strategy),
        rule.frequency,
        rule.deliveryHour,
        rule.deliveryDayOfWeek,
        rule.enabled,
        bound,
        rule.renotifyAfterHours,
      ],
    );
    const row = rows[0]!;
    // A body that is wrong anyway is answered from here: the count does not change that.
    if (mode === 'side by side' && row.limit_reached && !row.unknown?.length) return null;
    return { row, maxRules };
  });
}

export async function getRule(db: Database, organizationId: string, ruleId: string): Promise<Rule> {
  // Another organization's rule and a malformed id are the same to the caller: not found.
  const row = isUuid(ruleId)
    ? await db.prisma.notificationRule.findFirst({ where: { id: ruleId, organizationId }, include: ruleInclude })
    : null;
  if (!row) throw new NotFound('Notification rule not found.');
  return toRule(row);
}

export async function updateRule(db: Database, organizationId: string, ruleId: string, body: RuleUpdateBody): Promise<Rule> {
  const current = await getRule(db, organizationId, ruleId);
  const changes = prepareRuleChanges(current, body);
  await assertMembers(db, organizationId, changes.memberIds);
  try {
    const row = await db.prisma.$transaction(async (tx) => {
      const { count } = await tx.notificationRule.updateMany({
        where: { id: ruleId, organizationId },
        data: {
          name: changes.name,
          frequency: changes.frequency,
          deliveryHour: changes.deliveryHour,
          deliveryDayOfWeek: changes.deliveryDayOfWeek,
          renotifyAfterHours: changes.renotifyAfterHours,
          enabled: changes.enabled,
          lastUpdateDate: new Date(),
        },
      });
      if (count === 0) throw new NotFound('Notification rule not found.');
      // A disabled rule sends nothing more: what was waiting for its next delivery is dropped.
      if (!changes.enabled) await tx.match.updateMany({ where: { ruleId, status: 'pending' }, data: { status: 'dropped' } });
      await tx.notificationRuleMember.deleteMany({ where: { ruleId, teamMemberId: { notIn: changes.memberIds } } });
      await tx.notificationRuleMember.createMany({
        data: changes.memberIds.map((teamMemberId) => ({ ruleId, teamMemberId })),
        skipDuplicates: true,
      });
      return tx.notificationRule.findUniqueOrThrow({ where: { id: ruleId }, include: ruleInclude });
    });
    return toRule(row);
  } catch (error) {
    return memberRaceToValidation(error);
  }
}

export async function deleteRule(db: Database, organizationId: string, ruleId: string): Promise<void> {
  const { count } = isUuid(ruleId)
    ? await db.prisma.notificationRule.deleteMany({ where: { id: ruleId, organizationId } })
    : { count: 0 };
  if (count === 0) throw new NotFound('Notification rule not found.');
}

/**
 * What each ordering field sorts by. Clients see scope and frequency as strings, so they sort
 * as text (a PostgreSQL enum would sort in declaration order); names sort case-insensitively,
 * with the exact name breaking ties, whatever the database's collation.
 */
const ORDER_COLUMNS: Record<RuleListQuery['ordering'][number]['field'], readonly string[]> = {
  name: ['lower(r.name)', 'r.name'],
  scope: ['r.scope::text'],
  frequency: ['r.frequency::text'],
  enabled: ['r.enabled'],
  added_date: ['r.added_date'],
  last_update_date: ['r.last_update_date'],
};

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

interface ListRow {
  total: string;
  id: string | null;
  name: string;
  scope: Scope;
  frequency: Frequency;
  delivery_hour: number | null;
  delivery_day_of_week: number | null;
  members: Array<{ team_member_uuid: string; email: string; subscribed: boolean }>;
  enabled: boolean;
  renotify_after_hours: number | null;
  added_date: Date;
  last_update_date: Date;
}

/**
 * The list is the API's busiest read. One statement, one round trip: the total is
 * counted on the table (indexes, no row copies), the page is read with ORDER BY …
 * LIMIT, and each rule's members come from index lookups.
 */
export async function listRules(db: Database, organizationId: string, query: RuleListQuery): Promise<{ total: number; rules: RuleSummary[] }> {
  const params: unknown[] = [organizationId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['r.organization_id = $1'];
  if (query.nameContains !== undefined) where.push(`r.name ILIKE ${param(likePattern(query.nameContains))}`);
  if (query.nameNotContains !== undefined) where.push(`r.name NOT ILIKE ${param(likePattern(query.nameNotContains))}`);
  if (query.scopeIn) where.push(`r.scope = ANY(${param(query.scopeIn)}::scope[])`);
  if (query.scopeNin) where.push(`r.scope <> ALL(${param(query.scopeNin)}::scope[])`);
  if (query.frequencyIn) where.push(`r.frequency = ANY(${param(query.frequencyIn)}::frequency[])`);
  if (query.frequencyNin) where.push(`r.frequency <> ALL(${param(query.frequencyNin)}::frequency[])`);
  const memberExists = (ids: string[]) =>
    `EXISTS (SELECT 1 FROM notification_rule_members f WHERE f.rule_id = r.id AND f.team_member_id = ANY(${param(ids)}::uuid[]))`;
  if (query.membersIn) where.push(memberExists(query.membersIn));
  if (query.membersNin) where.push(`NOT ${memberExists(query.membersNin)}`);
  if (query.enabled !== undefined) where.push(`r.enabled = ${param(query.enabled)}`);
  if (query.addedDateLte) where.push(`r.added_date <= ${param(query.addedDateLte)}`);
  if (query.addedDateGte) where.push(`r.added_date >= ${param(query.addedDateGte)}`);
  if (query.lastUpdateDateLte) where.push(`r.last_update_date <= ${param(query.lastUpdateDateLte)}`);
  if (query.lastUpdateDateGte) where.push(`r.last_update_date >= ${param(query.lastUpdateDateGte)}`);
  // The id breaks ties so that pages never overlap or skip a rule.
  const orderBy = [
    ...query.ordering.flatMap((o) => ORDER_COLUMNS[o.field].map((column) => `${column} ${o.direction === 'desc' ? 'DESC' : 'ASC'}`)),
    'r.id ASC',
  ].join(', ');
  const limit = param(query.pageSize);
  const offset = param((query.page - 1) * query.pageSize);
  const filter = where.join(' AND ');
  const sql = `
    WITH page AS (
      SELECT r.id, r.name, r.scope, r.frequency, r.delivery_hour, r.delivery_day_of_week, r.enabled, r.renotify_after_hours, r.added_date, r.last_update_date
        FROM notification_rules r WHERE ${filter}
       ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
    )
    SELECT t.total, r.*, COALESCE(pm.members, '[]'::json) AS members
      FROM (SELECT count(*) AS total FROM notification_rules r WHERE ${filter}) t
      LEFT JOIN (
        page r LEFT JOIN LATERAL (
          SELECT json_agg(json_build_object('team_member_uuid', m.id, 'email', m.email, 'subscribed', rm.unsubscribed_at IS NULL) ORDER BY m.email) AS members
            FROM notification_rule_members rm JOIN team_members m ON m.id = rm.team_member_id
           WHERE rm.rule_id = r.id
        ) pm ON true
      ) ON true
     ORDER BY ${orderBy}`;
  const { rows } = await db.pool.query<ListRow>(sql, params);
  const total = Number(rows[0]?.total ?? 0);
  return {
    total,
    rules: rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: row.id!,
        name: row.name,
        scope: row.scope,
        frequency: row.frequency,
        deliveryHour: row.delivery_hour,
        deliveryDayOfWeek: row.delivery_day_of_week,
        members: row.members.map((member) => ({ teamMemberId: member.team_member_uuid, email: member.email, subscribed: member.subscribed })),
        enabled: row.enabled,
        renotifyAfterHours: row.renotify_after_hours,
        addedDate: row.added_date,
        lastUpdateDate: row.last_update_date,
      })),
  };
}
