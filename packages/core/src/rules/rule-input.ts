import type { Frequency, Scope } from '../scopes';
import { normalizeSchedule } from '../schedule';
import type { Filters } from '../conditions';

/** A create body after schema validation (types and bounds already checked). */
export interface RuleCreateBody {
  name: string;
  scope: Scope;
  /** Already validated and normalized by the condition language. */
  strategy?: Filters | null;
  frequency?: Frequency;
  delivery_hour?: number | null;
  delivery_day_of_week?: number | null;
  members: string[];
  enabled?: boolean;
  renotify_after_hours?: number | null;
}

/** An update body after schema validation; omitted delivery fields keep their value. */
export interface RuleUpdateBody {
  name: string;
  frequency?: Frequency;
  delivery_hour?: number | null;
  delivery_day_of_week?: number | null;
  members: string[];
  enabled: boolean;
  /** Omitted: unchanged; null: every match is e-mailed again. */
  renotify_after_hours?: number | null;
}

/** Bounds of `renotify_after_hours`: an hour to a year. */
export const RENOTIFY_LIMITS = { min: 1, max: 8760 } as const;

export interface RuleSchedule {
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
}

export interface NewRule extends RuleSchedule {
  name: string;
  scope: Scope;
  strategy: Filters | null;
  memberIds: string[];
  enabled: boolean;
  renotifyAfterHours: number | null;
}

export interface RuleChanges extends RuleSchedule {
  name: string;
  memberIds: string[];
  enabled: boolean;
  renotifyAfterHours: number | null;
}

function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

/** Applies the create defaults of product decisions §3. */
export function prepareNewRule(body: RuleCreateBody): NewRule {
  return {
    name: body.name,
    scope: body.scope,
    strategy: body.strategy ?? null,
    ...normalizeSchedule({
      frequency: body.frequency ?? 'instant',
      deliveryHour: body.delivery_hour ?? null,
      deliveryDayOfWeek: body.delivery_day_of_week ?? null,
    }),
    memberIds: uniqueIds(body.members),
    enabled: body.enabled ?? true,
    renotifyAfterHours: body.renotify_after_hours ?? null,
  };
}

/** Merges an update into the rule's schedule: what the body omits stays as it was. */
export function prepareRuleChanges(current: RuleSchedule & { renotifyAfterHours: number | null }, body: RuleUpdateBody): RuleChanges {
  return {
    name: body.name,
    ...normalizeSchedule({
      frequency: body.frequency ?? current.frequency,
      deliveryHour: body.delivery_hour !== undefined ? body.delivery_hour : current.deliveryHour,
      deliveryDayOfWeek: body.delivery_day_of_week !== undefined ? body.delivery_day_of_week : current.deliveryDayOfWeek,
    }),
    memberIds: uniqueIds(body.members),
    enabled: body.enabled,
    renotifyAfterHours: body.renotify_after_hours !== undefined ? body.renotify_after_hours : current.renotifyAfterHours,
  };
}
