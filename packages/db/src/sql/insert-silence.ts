import type { NewSilence } from '@notify/core';
import { clientOf, type Transaction } from '../client';
import { SILENCE_COLUMNS, type SilenceRow } from './includes/silence-columns';

/** Stores a silence of the organization, made at `now`, and returns its row. */
export async function insertSilence(tx: Transaction, organizationId: string, silence: NewSilence, now: Date): Promise<SilenceRow> {
  const { rows } = await clientOf(tx).query<SilenceRow>(
    `INSERT INTO notification_silences (id, organization_id, filters, rule_ids, starts_at, ends_at, comment, added_date, last_update_date)
       VALUES (gen_random_uuid(), $1, $2::jsonb, $3::uuid[], $4, $5, $6, $7, $7)
       RETURNING ${SILENCE_COLUMNS}`,
    [organizationId, JSON.stringify(silence.filters), silence.ruleIds, silence.startsAt, silence.endsAt, silence.comment, now],
  );
  return rows[0]!;
}
