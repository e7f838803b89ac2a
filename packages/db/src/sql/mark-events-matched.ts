import { clientOf, named, plainArray, type Transaction } from '../client';

/** Marks events matched at `at`, so neither a retried job nor the reconciler matches them again. */
export async function markEventsMatched(tx: Transaction, events: ReadonlyArray<{ organization_id: string; id: string; received_at: Date | string }>, at: Date): Promise<void> {
  if (!events.length) return;
  // received_at (the partition key) lets each row's lookup skip the other months' partitions.
  await clientOf(tx).query(named('mark-events-matched',
    `UPDATE events e SET matched_at = $4
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS p(organization_id, id, received_at)
      WHERE e.organization_id = p.organization_id AND e.id = p.id AND e.received_at = p.received_at`,
    [plainArray(events.map((event) => event.organization_id)), events.map((event) => event.id), events.map((event) => event.received_at), at],
  ));
}
