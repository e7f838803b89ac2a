import { poolOf, type DatabaseHandle } from '../client';
import type { DeliveryEvent } from './includes/claimed-delivery';
import { EVENT_JSON } from './includes/event-json';
import type { ScopeEventCursor } from './read-scope-events';

/** Stored events in full, as an e-mail shows them, in the order of `keys` (unknown ones left out). */
export async function readEventDetails(db: DatabaseHandle, organizationId: string, keys: readonly ScopeEventCursor[]): Promise<DeliveryEvent[]> {
  if (!keys.length) return [];
  const { rows } = await poolOf(db).query<{ event: DeliveryEvent }>(
    `SELECT ${EVENT_JSON} AS event
       FROM unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS k(id, received_at, position)
       JOIN events e ON e.organization_id = $1 AND e.id = k.id AND e.received_at = k.received_at
      ORDER BY k.position`,
    [organizationId, keys.map((key) => key.id), keys.map((key) => key.receivedAt)],
  );
  return rows.map((row) => row.event);
}
