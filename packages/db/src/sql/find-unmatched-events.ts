import type { Scope } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

/** Events stored at or before `before` and still not matched, oldest first, at most `limit`. */
export async function findUnmatchedEvents(
  db: DatabaseHandle,
  before: Date,
  limit: number,
): Promise<Array<{ organization_id: string; id: string; scope: Scope; received_at: Date }>> {
  const { rows } = await poolOf(db).query<{ organization_id: string; id: string; scope: Scope; received_at: Date }>(
    `SELECT organization_id, id, scope, received_at FROM events WHERE matched_at IS NULL AND received_at <= $1 ORDER BY received_at LIMIT $2`,
    [before, limit],
  );
  return rows;
}
