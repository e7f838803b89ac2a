import { poolOf, type DatabaseHandle } from '../client';
import { SILENCE_COLUMNS, type SilenceRow } from './includes/silence-columns';

/** Ends the organization's silence at `now` (a pending one starts and ends then); null when it had ended already, or there is none. */
export async function endSilence(db: DatabaseHandle, organizationId: string, silenceId: string, now: Date): Promise<SilenceRow | null> {
  const { rows } = await poolOf(db).query<SilenceRow>(
    `UPDATE notification_silences SET ends_at = LEAST(ends_at, $3), starts_at = LEAST(starts_at, $3), last_update_date = $3
      WHERE id = $1 AND organization_id = $2 AND ends_at > $3
      RETURNING ${SILENCE_COLUMNS}`,
    [silenceId, organizationId, now],
  );
  return rows[0] ?? null;
}
