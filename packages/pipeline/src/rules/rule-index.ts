import { setImmediate as nextTurn } from 'node:timers/promises';
import { compileFilters, type Filters, type Frequency, type MatchableEvent, type Predicate, type Scope } from '@notify/core';
import { loadEnabledRules, loadEnabledRulesAfter, loadSilences, type DatabaseHandle, type EnabledRule } from '@notify/db';
import type { RuleChange } from './rule-changes';
import { silencesByOrganization, type IndexedSilence, type SilenceSet } from './silence-set';

/**
 * How long matching evaluates before it lets the rest of the process run. The cost budget of
 * strategies and the plan's max_rules bound one organization's work per event, but that bound is
 * still far longer than a job lock's patience allows one event loop to be held; without turns, a job over such rules would hold a
 * match process's event loop for all of it, and every other organization's jobs (and the job locks'
 * renewals) would wait behind it.
 */
/** How many rule evaluations go between two looks at the clock. */
const CLOCK_EVERY = 8;
const EVALUATION_SLICE_MS = 10;

/** An enabled rule as the match stage holds it: strategy compiled once. */
export interface IndexedRule {
  id: string;
  organizationId: string;
  scope: Scope;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  /** A finding is news again only this many hours after it last was; null: every match is news. */
  renotifyAfterHours: number | null;
  timeZone: string;
  /**
   * A digest rule's members' time zones: its matches are recorded once per zone, each in that
   * zone's period, so every member gets the digest at the delivery hour of their own clock.
   * The organization's zone when no member is subscribed; [] for instant and hourly rules.
   */
  memberZones: readonly string[];
  matches: Predicate;
}

const MATCH_ALL: Predicate = () => true;

/**
 * What rules share, held once: the strings PostgreSQL returns afresh in every row (an
 * organization's id across its rules, scope, frequency, time zones), a digest rule's member zones,
 * and the compiled predicate of each distinct strategy text. With 100,000 rules these copies were
 * over half of the index's heap. A full load starts a new one (taking over from the last what is
 * still in use), so what removed rules alone held goes with the old one.
 */
class Shared {
  private readonly strings = new Map<string, string>();
  private readonly zoneLists = new Map<string, readonly string[]>();
  private readonly predicates = new Map<string, Predicate>();

  /** The last full load's, while this one is built from a new load; dropped once it is. */
  constructor(private previous?: Shared) {}

  /** The load is over: what the last one held and this one took over is here now. */
  settle(): this {
    this.previous = undefined;
    return this;
  }

  string<T extends string>(value: T): T {
    const held = this.strings.get(value);
    if (held !== undefined) return held as T;
    this.strings.set(value, value);
    return value;
  }

  zones(zones: readonly string[]): readonly string[] {
    const key = zones.join('\n');
    let held = this.zoneLists.get(key);
    if (!held) {
      held = Object.freeze(zones.map((zone) => this.string(zone)));
      this.zoneLists.set(key, held);
    }
    return held;
  }

  /** A strategy's predicate, compiled once per distinct text (jsonb's canonical print). */
  predicate(strategy: string | null): Predicate {
    if (strategy === null) return MATCH_ALL;
    let held = this.predicates.get(strategy);
    if (!held) {
      held = this.previous?.predicates.get(strategy) ?? compileFilters(JSON.parse(strategy) as Filters);
      this.predicates.set(strategy, held);
    }
    return held;
  }

  index(row: EnabledRule): IndexedRule {
    const timeZone = this.string(row.timezone);
    return {
      id: row.id,
      organizationId: this.string(row.organization_id),
      scope: this.string(row.scope),
      frequency: this.string(row.frequency),
      deliveryHour: row.delivery_hour,
      deliveryDayOfWeek: row.delivery_day_of_week,
      renotifyAfterHours: row.renotify_after_hours,
      timeZone,
      memberZones: row.frequency === 'instant' || row.frequency === 'hourly' ? NO_ZONES : this.zones(row.member_zones.length ? row.member_zones : [timeZone]),
      // Most rules have no strategy: they share one predicate; the others, one per distinct strategy.
      matches: this.predicate(row.strategy),
    };
  }
}

const NO_ZONES: readonly string[] = Object.freeze([]);

/** Rules a full load reads per statement. */
const LOAD_PAGE = 5000;

const keyOf = (organizationId: string, scope: string) => `${organizationId}|${scope}`;

/**
 * Enabled rules by (organization, scope), in memory: matching an event is a map
 * lookup plus the compiled predicates of that organization's rules for that scope.
 */
export class RuleIndex {
  private byKey = new Map<string, IndexedRule[]>();
  private byId = new Map<string, IndexedRule>();
  /** Unexpired silences by organization (few: SILENCE_LIMITS bounds them). */
  private silences = new Map<string, SilenceSet>();
  private shared = new Shared();
  /** For each full load under way, the changes announced since it began. */
  private readonly announcedDuringLoad = new Set<RuleChange[]>();

  get size(): number {
    return this.byId.size;
  }

  has(ruleId: string): boolean {
    return this.byId.has(ruleId);
  }

  rulesFor(organizationId: string, scope: string): readonly IndexedRule[] {
    return this.byKey.get(keyOf(organizationId, scope)) ?? [];
  }

  /**
   * The (rule, event) pairs that match, events in order, each event's rules in index order; a
   * pair an active silence covers at `now` names it (`silenceId`). Gives the event loop a turn
   * after every EVALUATION_SLICE_MS of evaluation.
   */
  async matchAll<E extends { organization_id: string; scope: string }>(
    events: readonly E[],
    toMatchable: (event: E) => MatchableEvent,
    now: Date = new Date(),
  ): Promise<Array<{ rule: IndexedRule; event: E; silenceId?: string }>> {
    const matched: Array<{ rule: IndexedRule; event: E; silenceId?: string }> = [];
    const at = now.getTime();
    let sliceStarted = performance.now();
    let evaluations = 0;
    for (const event of events) {
      const matchable = toMatchable(event);
      // An event's silences are looked at once, when its first rule matches: they depend on the
      // event alone, but for the rules a silence names.
      let covering: readonly IndexedSilence[] | undefined;
      // A refresh during a turn replaces the list rather than changing it, so this one stays whole.
      for (const rule of this.rulesFor(event.organization_id, event.scope)) {
        if (rule.matches(matchable)) {
          covering ??= this.silences.get(event.organization_id)?.covering(matchable, at) ?? [];
          const silence = covering.length ? covering.find((s) => !s.ruleIds || s.ruleIds.has(rule.id)) : undefined;
          matched.push({ rule, event, silenceId: silence?.id });
        }
        // The clock is read every CLOCK_EVERY evaluations, not per rule: even the costliest strategy
        // the budget allows keeps a slice near EVALUATION_SLICE_MS (bench:strategy-cost measures it).
        if (++evaluations % CLOCK_EVERY === 0 && performance.now() - sliceStarted >= EVALUATION_SLICE_MS) {
          await nextTurn();
          sliceStarted = performance.now();
        }
      }
    }
    return matched;
  }

  /**
   * Full resynchronisation: the safety net behind change notifications. Rules are read a page at
   * a time, so the load holds one page's rows beside the index rather than every rule's (tens of
   * megabytes for a hundred thousand rules, and the heap V8 grows for them stays the process's).
   * Changes announced while it reads are applied again once the new index is in place, as the
   * pages read before them may predate them.
   */
  async loadAll(db: DatabaseHandle): Promise<void> {
    const announced: RuleChange[] = [];
    this.announcedDuringLoad.add(announced);
    try {
      const shared = new Shared(this.shared);
      const byKey = new Map<string, IndexedRule[]>();
      const byId = new Map<string, IndexedRule>();
      let after: string | null = null;
      for (;;) {
        const rows = await loadEnabledRulesAfter(db, after, LOAD_PAGE);
        for (const row of rows) {
          const rule = shared.index(row);
          byId.set(rule.id, rule);
          const key = keyOf(rule.organizationId, rule.scope);
          const list = byKey.get(key);
          if (list) list.push(rule);
          else byKey.set(key, [rule]);
        }
        if (rows.length < LOAD_PAGE) break;
        after = rows[rows.length - 1]!.id;
      }
      this.silences = silencesByOrganization(await loadSilences(db));
      this.byKey = byKey;
      this.byId = byId;
      this.shared = shared.settle();
    } finally {
      this.announcedDuringLoad.delete(announced);
    }
    for (const change of announced) await this.refresh(db, change);
  }

  /**
   * Reloads the named rules and every rule of the named organizations (a time zone change), and
   * the silences of the organizations named in `silenceOrganizationIds`.
   */
  async refresh(db: DatabaseHandle, change: RuleChange): Promise<void> {
    for (const announced of this.announcedDuringLoad) announced.push(change);
    const silenceOrganizations = change.silenceOrganizationIds ?? [];
    if (silenceOrganizations.length) {
      const fresh = silencesByOrganization(await loadSilences(db, silenceOrganizations));
      for (const organizationId of silenceOrganizations) {
        const list = fresh.get(organizationId);
        if (list) this.silences.set(organizationId, list);
        else this.silences.delete(organizationId);
      }
    }
    const ruleIds = change.ruleIds ?? [];
    const organizationIds = change.organizationIds ?? [];
    if (!ruleIds.length && !organizationIds.length) return;
    const rows = await loadEnabledRules(db, { ruleIds, organizationIds });
    const stale = new Set(ruleIds);
    for (const rule of this.byId.values()) if (organizationIds.includes(rule.organizationId)) stale.add(rule.id);
    for (const id of stale) this.remove(id);
    for (const row of rows) this.add(this.shared.index(row));
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
