import { compileFilters, type Filters, type Scope } from '@notify/core';
import { ALL_SCOPE_EVENT_COLUMNS, readScopeEvents, type DatabaseHandle, type ScopeEvent, type ScopeEventColumns, type ScopeEventCursor } from '@notify/db';

/** Events read per page while scanning an organization's stored events newest first. */
export const SCAN_PAGE = 2000;

/**
 * Reads an organization's stored events of one scope in [from, to), newest first, a page at a
 * time, and hands each to `visit` until it returns false or `maxEvents` were read. Returns how
 * many were read.
 */
export async function scanScopeEvents(
  db: DatabaseHandle,
  organizationId: string,
  scope: Scope,
  range: { from: Date; to: Date },
  visit: (event: ScopeEvent) => boolean,
  options: { maxEvents?: number; columns?: ScopeEventColumns } = {},
): Promise<number> {
  const maxEvents = options.maxEvents ?? Number.POSITIVE_INFINITY;
  let read = 0;
  let before: ScopeEventCursor | undefined;
  while (read < maxEvents) {
    const page = await readScopeEvents(db, organizationId, scope, range, Math.min(SCAN_PAGE, maxEvents - read), before, options.columns ?? ALL_SCOPE_EVENT_COLUMNS);
    for (const event of page) {
      read++;
      if (!visit(event)) return read;
    }
    if (page.length < SCAN_PAGE) return read;
    const last = page[page.length - 1]!;
    before = { receivedAt: new Date(last.received_ms), id: last.id };
  }
  return read;
}

/** How many stored events a test send looks through for the rule's latest match before taking a sample. */
export const LATEST_MATCH_SCAN_LIMIT = 20_000;

/** The costly columns a strategy reads: `data` for data.<key> conditions, `tags` for tags ones. */
export function strategyColumns(strategy: Filters | null, finding: boolean): ScopeEventColumns {
  const names = strategy ? [...(strategy.must ?? []), ...(strategy.should ?? []), ...(strategy.must_not ?? [])].map((condition) => condition.name) : [];
  return { data: names.some((name) => name.startsWith('data.')), tags: names.includes('tags'), finding };
}

/** The newest stored event of the scope, since `from`, that the strategy matches; undefined when none of the newest LATEST_MATCH_SCAN_LIMIT does. */
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
  }, { maxEvents: LATEST_MATCH_SCAN_LIMIT });
  return found;
}
