import type { Filters, Scope } from '@notify/core';
import { ALL_SCOPE_EVENT_COLUMNS, readScopeEvents, type DatabaseHandle, type ScopeEvent, type ScopeEventColumns, type ScopeEventCursor } from '@notify/db';

/**
 * An organization's stored events of one scope, read back for a rule that is not matching live:
 * a preview replays them, a test send looks for the rule's latest match among them.
 */

/** Events read per page while scanning newest first. */
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

/** The costly columns a scan must read for a strategy (`data` for data.<key> conditions, `tags` for tags ones) and, with `finding`, a renotify window. */
export function strategyColumns(strategy: Filters | null, finding: boolean): ScopeEventColumns {
  const names = strategy ? [...(strategy.must ?? []), ...(strategy.should ?? []), ...(strategy.must_not ?? [])].map((condition) => condition.name) : [];
  return { data: names.some((name) => name.startsWith('data.')), tags: names.includes('tags'), finding };
}
