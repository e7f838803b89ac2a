import { INGEST_LIMITS } from '../events/event';
import { MESSAGES } from './messages';
import type { Condition, ConditionIssue, Filters } from './types';

/**
 * The most a strategy may cost (see strategyCost). Every realistic rule stays far below it:
 * 150 `eq` conditions on `asset` cost 153,750, ten conditions on `tags` 128,010, ten
 * `*.example.com` wildcards on `asset` 20,490. On the largest event ingest accepts, the costliest
 * strategies it lets through take a small fraction of what 150 wildcards of 1,024 characters took
 * (measured: see commit b3b70d1).
 */
export const STRATEGY_COST_LIMIT = 200_000;

/** The most characters of event text a condition on the field can have to look at (ingest's limits). */
function fieldChars(name: string): number {
  switch (name) {
    case 'asset':
      return INGEST_LIMITS.assetMaxLength;
    case 'asset_type':
      return INGEST_LIMITS.assetTypeMaxLength;
    case 'severity':
      return 8;
    case 'tags':
      return INGEST_LIMITS.maxTags * INGEST_LIMITS.tagMaxLength;
    default:
      // data.<key>: one key may hold all of `data`.
      return INGEST_LIMITS.dataMaxBytes;
  }
}

/** How many times a condition may read its field's text. */
function passes(condition: Condition): number {
  switch (condition.type) {
    case 'exists':
      return 0;
    case 'contains_all':
      // Builds a set of the event's values, then looks each wanted value up in it.
      return 2;
    case 'wildcard': {
      // Each `*` starts a search of the rest of the text (wildcard.ts: linear per segment).
      const stars = typeof condition.value === 'string' ? condition.value.split(/\*+/).length - 1 : 0;
      return 1 + stars;
    }
    default:
      // eq, in, contains_any, startswith, endswith, gte, lte: one case-folded read of each value.
      return 1;
  }
}

/**
 * What evaluating a strategy on one event may cost, in the worst case: for each condition, the
 * number of passes its operator makes over the text of its field (a wildcard one more per `*`)
 * times the most text that field can hold in an event (`tags` 12,800 characters, `data.<key>`
 * 16,384, `asset` 1,024, `asset_type` 64), plus one per condition. The unit is about one
 * character compared, and evaluation's time grows with it (measured: see commit ecac216), so the
 * cost bounds the time a rule adds to every event of its scope, whatever the events hold.
 */
export function strategyCost(filters: Filters | null): number {
  if (!filters) return 0;
  let cost = 0;
  for (const clause of [filters.must, filters.should, filters.must_not]) {
    for (const condition of clause) cost += 1 + passes(condition) * fieldChars(condition.name);
  }
  return cost;
}

/** The problem with a strategy over the budget, at `param` (the strategy's own field), or null. */
export function strategyCostIssue(filters: Filters | null, param = 'strategy'): ConditionIssue | null {
  const cost = strategyCost(filters);
  return cost > STRATEGY_COST_LIMIT ? { param, message: MESSAGES.tooCostly(cost, STRATEGY_COST_LIMIT) } : null;
}
