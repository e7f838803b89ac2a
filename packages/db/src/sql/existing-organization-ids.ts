import { poolOf, type DatabaseHandle } from '../client';

/** Which of `ids` name an organization, in one query. */
export async function existingOrganizationIds(db: DatabaseHandle, ids: readonly string[]): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ id: string }>('SELECT id::text AS id FROM organizations WHERE id = ANY($1::uuid[])', [ids]);
  return rows.map((row) => row.id);
}
