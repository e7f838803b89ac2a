import type { Frequency, Scope } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

/** An enabled rule with what matching needs: its strategy and its schedule. */
export interface EnabledRule {
  id: string;
  organization_id: string;
  scope: Scope;
  /**
   * Its strategy as PostgreSQL prints jsonb (keys in one order, one spacing), so equal strategies
   * are equal texts and the index compiles each once; null without one.
   */
  strategy: string | null;
  frequency: Frequency;
  delivery_hour: number | null;
  delivery_day_of_week: number | null;
  renotify_after_hours: number | null;
  timezone: string;
  /** A digest rule's subscribed members' time zones (their own, or the organization's), sorted; [] for other rules. */
  member_zones: string[];
}

const SELECT_RULES = `
  SELECT r.id, r.organization_id, r.scope, r.strategy::text AS strategy, r.frequency, r.delivery_hour, r.delivery_day_of_week, r.renotify_after_hours, o.timezone,
         CASE WHEN r.frequency IN ('daily', 'weekly', 'monthly') THEN ARRAY(
           SELECT DISTINCT COALESCE(t.timezone, o.timezone)::text
             FROM notification_rule_members rm JOIN team_members t ON t.id = rm.team_member_id
            WHERE rm.rule_id = r.id AND rm.unsubscribed_at IS NULL
            ORDER BY 1) ELSE '{}'::text[] END AS member_zones
    FROM notification_rules r JOIN organizations o ON o.id = r.organization_id
   WHERE r.enabled`;

/** The enabled ones among the named rules and the rules of the named organizations. */
export async function loadEnabledRules(db: DatabaseHandle, only: { ruleIds: readonly string[]; organizationIds: readonly string[] }): Promise<EnabledRule[]> {
  const { rows } = await poolOf(db).query<EnabledRule>(`${SELECT_RULES} AND (r.id = ANY($1::uuid[]) OR r.organization_id = ANY($2::uuid[]))`, [only.ruleIds, only.organizationIds]);
  return rows;
}

/**
 * Every enabled rule, a page at a time: those after `afterId` in id order, at most `limit`. A
 * full load holds one page's rows at a time rather than every rule's.
 */
export async function loadEnabledRulesAfter(db: DatabaseHandle, afterId: string | null, limit: number): Promise<EnabledRule[]> {
  const { rows } = await poolOf(db).query<EnabledRule>(`${SELECT_RULES} AND ($1::uuid IS NULL OR r.id > $1::uuid) ORDER BY r.id LIMIT $2`, [afterId, limit]);
  return rows;
}
