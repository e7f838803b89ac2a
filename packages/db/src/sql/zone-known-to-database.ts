import { poolOf, type DatabaseHandle } from '../client';
import { pgCode, PG } from '../errors';

/** PostgreSQL's tz database knows the zone (quiet hours are reckoned in SQL): a name only ICU knows is refused. */
export async function zoneKnownToDatabase(db: DatabaseHandle, zone: string): Promise<boolean> {
  try {
    await poolOf(db).query(`SELECT now() AT TIME ZONE $1`, [zone]);
    return true;
  } catch (error) {
    if (pgCode(error) === PG.invalidParameterValue) return false;
    throw error;
  }
}
