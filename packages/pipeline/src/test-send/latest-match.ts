import { compileFilters, type Filters, type Scope } from '@notify/core';
import type { DatabaseHandle, ScopeEvent } from '@notify/db';
import { scanScopeEvents, strategyColumns } from '../stored-events/scan-scope-events';

/** How many stored events a test send looks through for the rule's latest match before taking a sample. */
export const LATEST_MATCH_SCAN_LIMIT = 20_000;

/** The newest stored event of the scope in `range` that the strategy matches; undefined when none of the newest LATEST_MATCH_SCAN_LIMIT does. */
export async function findLatestMatch(
  db: DatabaseHandle,
  rule: { organizationId: string; scope: Scope; strategy: Filters | null },
  range: { from: Date; to: Date },
): Promise<ScopeEvent | undefined> {
  const matches = compileFilters(rule.strategy);
  let found: ScopeEvent | undefined;
  await scanScopeEvents(db, rule.organizationId, rule.scope, range, (event) => {
    if (!matches(event)) return true;
    found = event;
    return false;
  }, { maxEvents: LATEST_MATCH_SCAN_LIMIT, columns: strategyColumns(rule.strategy, false) });
  return found;
}
