import type { Scope } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

/** What a rule's strategy and its renotify window read of a stored event, and where to find it again. */
export interface ScopeEvent {
  id: string;
  /** When it arrived, in epoch milliseconds (a number parses far faster than a timestamp). */
  received_ms: number;
  asset: string;
  asset_type: string | null;
  severity: string | null;
  /** Null unless asked for (`columns.tags`). */
  tags: string[] | null;
  /** Null unless asked for (`columns.data`), or none. */
  data: Record<string, unknown> | null;
  /** Empty and null unless asked for (`columns.finding`). */
  title: string;
  fingerprint: string | null;
}

/** The costly columns a scan reads only when the rule needs them: `data` and `tags` for its strategy, title and fingerprint for its renotify window. */
export interface ScopeEventColumns {
  data: boolean;
  tags: boolean;
  finding: boolean;
}

export const ALL_SCOPE_EVENT_COLUMNS: ScopeEventColumns = { data: true, tags: true, finding: true };

/** Where a newest-first scan stopped: the next page starts below it. */
export interface ScopeEventCursor {
  receivedAt: Date;
  id: string;
}

/**
 * One page of an organization's stored events of one scope that arrived in [from, to), newest
 * first, below `before` when given. Reads the index on (organization_id, scope, received_at) and
 * only the months the range covers.
 */
export async function readScopeEvents(
  db: DatabaseHandle,
  organizationId: string,
  scope: Scope,
  range: { from: Date; to: Date },
  limit: number,
  before?: ScopeEventCursor,
  columns: ScopeEventColumns = ALL_SCOPE_EVENT_COLUMNS,
): Promise<ScopeEvent[]> {
  const { rows } = await poolOf(db).query<ScopeEvent>(
    `SELECT id, (extract(epoch FROM received_at) * 1000)::float8 AS received_ms, asset, asset_type, severity,
            ${columns.tags ? 'tags' : 'NULL'} AS tags, ${columns.data ? 'data' : 'NULL'} AS data,
            ${columns.finding ? 'title' : "''"} AS title, ${columns.finding ? 'fingerprint' : 'NULL'} AS fingerprint
       FROM events
      WHERE organization_id = $1 AND scope = $2 AND received_at >= $3 AND received_at < $4
        AND ($5::timestamptz IS NULL OR (received_at, id) < ($5::timestamptz, $6::text))
      ORDER BY received_at DESC, id DESC
      LIMIT $7`,
    [organizationId, scope, range.from, range.to, before?.receivedAt ?? null, before?.id ?? null, limit],
  );
  return rows;
}
