import { poolOf, type DatabaseHandle } from '../client';

/** One round trip to the database (readiness). */
export async function ping(db: DatabaseHandle): Promise<void> {
  await poolOf(db).query('SELECT 1');
}
