import {
  isUuid,
  messages,
  NotFound,
  prepareNewRule,
  prepareRuleChanges,
  ValidationFailed,
  type Filters,
  type Frequency,
  type RuleCreateBody,
  type RuleListQuery,
  type RuleUpdateBody,
  type Scope,
} from '@notify/core';
import type { Prisma } from './generated/prisma/client';
import type { Database } from './client';
import { pgCode, PG } from './errors';
import { unknownMemberIds } from './members';

export interface RuleMember {
  teamMemberId: string;
  email: string;
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
      .map((link) => ({ teamMemberId: link.teamMember.id, email: link.teamMember.email }))
      .sort((a, b) => a.email.localeCompare(b.email)),
    enabled: row.enabled,
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

export async function createRule(db: Database, organizationId: string, body: RuleCreateBody): Promise<Rule> {
  const rule = prepareNewRule(body);
  await assertMembers(db, organizationId, rule.memberIds);
  try {
    const row = await db.prisma.notificationRule.create({
      data: {
        organizationId,
        name: rule.name,
        scope: rule.scope,
        strategy: rule.strategy === null ? undefined : (rule.strategy as unknown as Prisma.InputJsonValue),
        frequency: rule.frequency,
        deliveryHour: rule.deliveryHour,
        deliveryDayOfWeek: rule.deliveryDayOfWeek,
        enabled: rule.enabled,
        members: { createMany: { data: rule.memberIds.map((teamMemberId) => ({ teamMemberId })) } },
      },
      include: ruleInclude,
    });
    return toRule(row);
  } catch (error) {
    return memberRaceToValidation(error);
  }
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
  results: Array<{
    id: string;
    name: string;
    scope: Scope;
    frequency: Frequency;
    delivery_hour: number | null;
    delivery_day_of_week: number | null;
    members: Array<{ team_member_uuid: string; email: string }>;
    enabled: boolean;
    added_date: string;
    last_update_date: string;
  }>;
}

/**
 * The list is the API's busiest read: one statement computes the page, its
 * members and the total, so a request costs one round trip.
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
  const utc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const sql = `
    WITH filtered AS (
      SELECT r.* FROM notification_rules r WHERE ${where.join(' AND ')}
    ), page AS (
      SELECT r.*, row_number() OVER (ORDER BY ${orderBy}) AS position
        FROM filtered r ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
    )
    SELECT (SELECT count(*) FROM filtered) AS total,
           COALESCE((
             SELECT json_agg(json_build_object(
                      'id', r.id, 'name', r.name, 'scope', r.scope, 'frequency', r.frequency,
                      'delivery_hour', r.delivery_hour, 'delivery_day_of_week', r.delivery_day_of_week,
                      'members', COALESCE((
                        SELECT json_agg(json_build_object('team_member_uuid', m.id, 'email', m.email) ORDER BY m.email)
                          FROM notification_rule_members rm JOIN team_members m ON m.id = rm.team_member_id
                         WHERE rm.rule_id = r.id), '[]'::json),
                      'enabled', r.enabled,
                      'added_date', ${utc('r.added_date')},
                      'last_update_date', ${utc('r.last_update_date')}
                    ) ORDER BY r.position)
               FROM page r), '[]'::json) AS results`;
  const { rows } = await db.pool.query<ListRow>(sql, params);
  const row = rows[0]!;
  return {
    total: Number(row.total),
    rules: row.results.map((item) => ({
      id: item.id,
      name: item.name,
      scope: item.scope,
      frequency: item.frequency,
      deliveryHour: item.delivery_hour,
      deliveryDayOfWeek: item.delivery_day_of_week,
      members: item.members.map((member) => ({ teamMemberId: member.team_member_uuid, email: member.email })),
      enabled: item.enabled,
      addedDate: new Date(item.added_date),
      lastUpdateDate: new Date(item.last_update_date),
    })),
  };
}
