import type { EventRecord } from '@notify/core';
import { clientOf, type Transaction } from '../client';

/** A stored event (core's EventRecord) with the fields matching reads. */
export type UnmatchedEvent = Pick<EventRecord, 'organization_id' | 'id' | 'scope' | 'occurred_at' | 'asset' | 'asset_type' | 'severity' | 'tags' | 'data'>;

/**
 * Reads the events among `pairs` ([organizationId, eventId]) that are not matched yet, oldest
 * first, and locks them for the transaction. Events another transaction holds are skipped
 * (SKIP LOCKED): two match jobs that got the same events do not match them twice.
 */
export async function lockUnmatchedEvents(tx: Transaction, pairs: ReadonlyArray<readonly [string, string]>): Promise<UnmatchedEvent[]> {
  const { rows } = await clientOf(tx).query<UnmatchedEvent>(
    `SELECT e.organization_id, e.id, e.scope, e.occurred_at, e.asset, e.asset_type, e.severity, e.tags, e.data
       FROM events e JOIN unnest($1::uuid[], $2::text[]) AS p(organization_id, id)
         ON e.organization_id = p.organization_id AND e.id = p.id
      WHERE e.matched_at IS NULL
      ORDER BY e.occurred_at, e.id
        FOR UPDATE OF e SKIP LOCKED`,
    [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1])],
  );
  return rows;
}
