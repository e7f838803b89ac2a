/**
 * includes/silence-columns — a silence's row as the silences API reads it.
 *
 * Takes:   notification_silences, its columns unqualified (a statement over that table alone).
 * Returns: SILENCE_COLUMNS, the select (or RETURNING) list whose rows are SilenceRow.
 * Used by: insert-silence, read-silence-page, find-silence, end-silence.
 */
import type { UnexpiredSilence } from '../load-silences';

/** A silence's row (SILENCE_COLUMNS). */
export interface SilenceRow extends UnexpiredSilence {
  comment: string;
  silenced_count: number;
  added_date: Date;
  last_update_date: Date;
}

export const SILENCE_COLUMNS = 'id, organization_id, filters, rule_ids, starts_at, ends_at, comment, silenced_count, added_date, last_update_date';
