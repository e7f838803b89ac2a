import { compileFilters, type Frequency, type MatchableEvent, type Predicate, type Scope } from '@notify/core';
import { loadEnabledRules, type DatabaseHandle, type EnabledRule } from '@notify/db';

/** An enabled rule as the match stage holds it: strategy compiled once. */
export interface IndexedRule {
  id: string;
  organizationId: string;
  scope: Scope;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  timeZone: string;
  matches: Predicate;
}

const MATCH_ALL: Predicate = () => true;

function toIndexed(row: EnabledRule): IndexedRule {
  const empty = !row.strategy || (row.strategy.must.length === 0 && row.strategy.should.length === 0 && row.strategy.must_not.length === 0);
  return {
    id: row.id,
    organizationId: row.organization_id,
    scope: row.scope,
    frequency: row.frequency,
    deliveryHour: row.delivery_hour,
    deliveryDayOfWeek: row.delivery_day_of_week,
    timeZone: row.timezone,
    // Most rules have no strategy: they share one predicate instead of a closure each.
    matches: empty ? MATCH_ALL : compileFilters(row.strategy),
  };
}

const keyOf = (organizationId: string, scope: string) => `${organizationId}|${scope}`;

/**
 * Enabled rules by (organization, scope), in memory: matching an event is a map
 * lookup plus the compiled predicates of that organization's rules for that scope.
 */
export class RuleIndex {
  private byKey = new Map<string, IndexedRule[]>();
  private byId = new Map<string, IndexedRule>();

  get size(): number {
    return this.byId.size;
  }

  has(ruleId: string): boolean {
    return this.byId.has(ruleId);
  }

  rulesFor(organizationId: string, scope: string): readonly IndexedRule[] {
    return this.byKey.get(keyOf(organizationId, scope)) ?? [];
  }

  /** Full resynchronisation: the safety net behind change notifications. */
  async loadAll(db: DatabaseHandle): Promise<void> {
    const rows = await loadEnabledRules(db);
    const byKey = new Map<string, IndexedRule[]>();
    const byId = new Map<string, IndexedRule>();
    for (const row of rows) {
      const rule = toIndexed(row);
      byId.set(rule.id, rule);
      const key = keyOf(rule.organizationId, rule.scope);
      const list = byKey.get(key);
      if (list) list.push(rule);
      else byKey.set(key, [rule]);
    }
    this.byKey = byKey;
    this.byId = byId;
  }

  /** Reloads the named rules and every rule of the named organizations (a time zone change). */
  async refresh(db: DatabaseHandle, change: { ruleIds?: string[]; organizationIds?: string[] }): Promise<void> {
    const ruleIds = change.ruleIds ?? [];
    const organizationIds = change.organizationIds ?? [];
    if (!ruleIds.length && !organizationIds.length) return;
    const rows = await loadEnabledRules(db, { ruleIds, organizationIds });
    const stale = new Set(ruleIds);
    for (const rule of this.byId.values()) if (organizationIds.includes(rule.organizationId)) stale.add(rule.id);
    for (const id of stale) this.remove(id);
    for (const row of rows) this.add(toIndexed(row));
  }

  private add(rule: IndexedRule): void {
    this.byId.set(rule.id, rule);
    const key = keyOf(rule.organizationId, rule.scope);
    this.byKey.set(key, [...(this.byKey.get(key) ?? []), rule]);
  }

  private remove(id: string): void {
    const rule = this.byId.get(id);
    if (!rule) return;
    this.byId.delete(id);
    const key = keyOf(rule.organizationId, rule.scope);
    const remaining = (this.byKey.get(key) ?? []).filter((candidate) => candidate.id !== id);
    if (remaining.length) this.byKey.set(key, remaining);
    else this.byKey.delete(key);
  }
}

export type { MatchableEvent };
