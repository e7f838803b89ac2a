import { poolOf, type DatabaseHandle } from '../client';

/** The holder of a key as authentication reads it: the key, its organization and the organization's plan. */
export interface KeyHolderRow {
  key_id: string;
  organization_id: string;
  plan_groups: string[] | null;
  rate_limit_per_second: number;
  rate_limit_per_minute: number;
  monthly_quota: number;
}

/** The holder of the key of that hash, or null: one indexed query, no key material compared in SQL. */
export async function readKeyHolder(db: DatabaseHandle, keyHash: string): Promise<KeyHolderRow | null> {
  const { rows } = await poolOf(db).query<KeyHolderRow>(
    `SELECT k.id AS key_id, o.id AS organization_id, o.plan_groups, o.rate_limit_per_second, o.rate_limit_per_minute, o.monthly_quota
       FROM api_keys k JOIN organizations o ON o.id = k.organization_id
      WHERE k.key_hash = $1`,
    [keyHash],
  );
  return rows[0] ?? null;
}
