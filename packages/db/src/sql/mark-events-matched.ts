import { clientOf, type Transaction } from '../client';

/** Marks events matched at `at`, so neither a retried job nor the reconciler matches them again. */
export async function markEventsMatched(tx: Transaction, events: ReadonlyArray<{ organization_id: string; id: string }>, at: Date): Promise<void> {
  if (!events.length) return;
  await clientOf(tx).query(
    `UPDATE events e SET matched_at = $3
       FROM unnest($1::uuid[], $2::text[]) AS p(organization_id, id)
      WHERE e.organization_id = p.organization_id AND e.id = p.id`,
    [events.map((event) => event.organization_id), events.map((event) => event.id), at],
  );
}
