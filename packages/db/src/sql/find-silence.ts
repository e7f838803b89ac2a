import { poolOf, type DatabaseHandle } from '../client';
import { SILENCE_COLUMNS, type SilenceRow } from './includes/silence-columns';

/** The organization's silence of that id (a uuid), or null. */
export async function findSilence(db: DatabaseHandle, organizationId: string, silenceId: string): Promise<SilenceRow | null> {
  const { rows } = await poolOf(db).query<SilenceRow>(`SELECT ${SILENCE_COLUMNS} FROM notification_silences WHERE id = $1 AND organization_id = $2`, [silenceId, organizationId]);
  return rows[0] ?? null;
}
