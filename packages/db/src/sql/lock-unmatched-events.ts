import type { EventRecord } from '@notify/core';
import { clientOf, named, type Transaction } from '../client';

/** A stored event (core's EventRecord) with the fields matching reads, and when it was received (its partition). */
export type UnmatchedEvent = Pick<EventRecord, 'organization_id' | 'id' | 'scope' | 'occurred_at' | 'asset' | 'asset_type' | 'severity' | 'tags' | 'title' | 'data' | 'fingerprint'> & {
  /**
   * As PostgreSQL wrote it: it only goes back to PostgreSQL (the partition key of the event's
   * matches and of its own update), so it is neither parsed nor formatted here.
   */
  received_at: string;
};

/** Events live in month partitions of received_at: `months` picks this month and later, or earlier ones. */
const lockIn = (months: '>=' | '<') => `
  SELECT e.organization_id, e.id, e.received_at::text AS received_at, e.scope, e.occurred_at, e.asset, e.asset_type, e.severity, e.tags, e.title, e.data, e.fingerprint
    FROM events e JOIN unnest($1::uuid[], $2::text[]) AS p(organization_id, id)
      ON e.organization_id = p.organization_id AND e.id = p.id
   WHERE e.matched_at IS NULL AND e.received_at ${months} date_trunc('month', now(), 'UTC')
   ORDER BY e.occurred_at, e.id
     FOR UPDATE OF e SKIP LOCKED`;

/**
 * Reads the events among `pairs` ([organizationId, eventId]) that are not matched yet, oldest
 * first, and locks them for the transaction. Events another transaction holds are skipped
 * (SKIP LOCKED): two match jobs that got the same events do not match them twice. This month's
 * partitions are read first (where a match job's events almost always are); earlier months only
 * for the pairs not found there (the reconciler's old events, a job that waited across a month's turn).
 */
export async function lockUnmatchedEvents(tx: Transaction, pairs: ReadonlyArray<readonly [string, string]>): Promise<UnmatchedEvent[]> {
  const client = clientOf(tx);
  const recent = (await client.query<UnmatchedEvent>(named('lock-unmatched-recent', lockIn('>='), [pairs.map((pair) => pair[0]), pairs.map((pair) => pair[1])]))).rows;
  if (recent.length === pairs.length) return recent;
  const found = new Set(recent.map((event) => `${event.organization_id}|${event.id}`));
  const rest = pairs.filter(([organizationId, id]) => !found.has(`${organizationId}|${id}`));
  const older = (await client.query<UnmatchedEvent>(named('lock-unmatched-older', lockIn('<'), [rest.map((pair) => pair[0]), rest.map((pair) => pair[1])]))).rows;
  const byAge = (a: UnmatchedEvent, b: UnmatchedEvent) => a.occurred_at.getTime() - b.occurred_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return [...older, ...recent].sort(byAge);
}
