import type { Filters } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

/** A silence as matching needs it. */
export interface UnexpiredSilence {
  id: string;
  organization_id: string;
  filters: Filters;
  rule_ids: string[] | null;
  starts_at: Date;
  ends_at: Date;
}

/** The silences not yet expired (pending ones included: they start by the clock), all or of the named organizations. */
export async function loadSilences(db: DatabaseHandle, organizationIds?: readonly string[]): Promise<UnexpiredSilence[]> {
  const { rows } = await poolOf(db).query<UnexpiredSilence>(
    `SELECT id, organization_id, filters, rule_ids, starts_at, ends_at FROM notification_silences
      WHERE ends_at > now() AND ($1::uuid[] IS NULL OR organization_id = ANY($1::uuid[]))`,
    [organizationIds ?? null],
  );
  return rows;
}
