import { poolOf, type DatabaseHandle } from '../client';
import type { DeliveryStatus } from '@notify/core';

/** A delivery's status, or null when there is no such delivery. */
export async function findDeliveryStatus(db: DatabaseHandle, deliveryId: string): Promise<DeliveryStatus | null> {
  const { rows } = await poolOf(db).query<{ status: DeliveryStatus }>('SELECT status FROM deliveries WHERE id = $1', [deliveryId]);
  return rows[0]?.status ?? null;
}
