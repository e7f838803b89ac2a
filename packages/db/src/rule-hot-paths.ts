/**
 * The rules API's two hot paths, a thin front over sql/ operations (sql style): creating a rule,
 * which integrations do in bulk (sql/insert-rule-within-plan: the plan's limit checked in the
 * insert itself, exact under concurrency), and the list, the API's busiest read
 * (sql/read-rule-page: one statement). Prisma cannot express either statement; the rest of a
 * rule's life is ordinary CRUD, in rules.ts.
 */
import { LimitReached, messages, prepareNewRule, ValidationFailed, type RuleCreateBody, type RuleListQuery } from '@notify/core';
import type { Database } from './client';
import { memberRaceToValidation } from './errors';
import type { Rule, RuleSummary } from './rules';
import { insertRuleWithinPlan, type InsertedRule } from './sql/insert-rule-within-plan';
import { readRulePage } from './sql/read-rule-page';

/**
 * Creates a rule: its members must all be the organization's (a 400 naming the others), and the
 * organization's plan must have room for it (LimitReached). Side by side with other creates while
 * far from the limit, alone near it (sql/insert-rule-within-plan).
 */
export async function createRule(db: Database, organizationId: string, body: RuleCreateBody): Promise<Rule> {
  const rule = prepareNewRule(body);
  let inserted: InsertedRule;
  try {
    inserted = (await insertRuleWithinPlan(db, organizationId, rule, 'side by side')) ?? (await insertRuleWithinPlan(db, organizationId, rule, 'alone'));
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

/** A page of the organization's rules that match the query (sql/read-rule-page), and how many match in all. */
export async function listRules(db: Database, organizationId: string, query: RuleListQuery): Promise<{ total: number; rules: RuleSummary[] }> {
  const rows = await readRulePage(db, organizationId, query);
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
