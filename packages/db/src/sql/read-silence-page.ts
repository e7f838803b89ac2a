import type { SilenceListQuery, SilenceStatus } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';
import { SILENCE_COLUMNS, type SilenceRow } from './includes/silence-columns';

/** SQL condition on a silence's status at $2. */
const STATUS_SQL: Record<SilenceStatus, string> = {
  pending: '(starts_at > $2 AND ends_at > $2)',
  active: '(starts_at <= $2 AND ends_at > $2)',
  expired: '(ends_at <= $2)',
};

/** A page of the organization's silences of the query's statuses at `now`, latest first, and how many there are in all. */
export async function readSilencePage(db: DatabaseHandle, organizationId: string, query: SilenceListQuery, now: Date): Promise<{ total: number; rows: SilenceRow[] }> {
  const statuses = query.statusIn?.length ? query.statusIn : null;
  const where = `organization_id = $1${statuses ? ` AND (${statuses.map((status) => STATUS_SQL[status]).join(' OR ')})` : ' AND $2::timestamptz IS NOT NULL'}`;
  const pool = poolOf(db);
  const [{ rows: counted }, { rows }] = await Promise.all([
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM notification_silences WHERE ${where}`, [organizationId, now]),
    pool.query<SilenceRow>(
      `SELECT ${SILENCE_COLUMNS} FROM notification_silences WHERE ${where} ORDER BY added_date DESC, id LIMIT $3 OFFSET $4`,
      [organizationId, now, query.pageSize, (query.page - 1) * query.pageSize],
    ),
  ]);
  return { total: counted[0]!.n, rows };
}
