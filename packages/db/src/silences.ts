import { isUuid, LimitReached, messages, NotFound, SILENCE_LIMITS, ValidationFailed, type Filters, type NewSilence, type SilenceListQuery, type SilenceStatus } from '@notify/core';
import { clientOf, poolOf, withTransaction, type Database } from './client';
import type { UnexpiredSilence } from './sql/load-silences';

/** A silence as the API shows it (its status follows from the clock: silenceStatus). */
export interface Silence {
  id: string;
  organizationId: string;
  filters: Filters;
  /** null: every rule of the organization. */
  ruleIds: string[] | null;
  startsAt: Date;
  endsAt: Date;
  comment: string;
  silencedCount: number;
  addedDate: Date;
  lastUpdateDate: Date;
}

interface SilenceRow extends UnexpiredSilence {
  comment: string;
  silenced_count: number;
  added_date: Date;
  last_update_date: Date;
}

const COLUMNS = 'id, organization_id, filters, rule_ids, starts_at, ends_at, comment, silenced_count, added_date, last_update_date';

function toSilence(row: SilenceRow): Silence {
  return {
    id: row.id,
    organizationId: row.organization_id,
    filters: row.filters,
    ruleIds: row.rule_ids?.length ? row.rule_ids : null,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    comment: row.comment,
    silencedCount: row.silenced_count,
    addedDate: row.added_date,
    lastUpdateDate: row.last_update_date,
  };
}

/**
 * Stores a silence of the organization. Its rule ids must all be the organization's (a 400 naming
 * the others), and the organization may hold at most SILENCE_LIMITS.maxUnexpiredPerOrganization
 * silences not yet expired (LimitReached). Creates of one organization take turns on its row.
 */
export async function createSilence(db: Database, organizationId: string, silence: NewSilence, now: Date): Promise<Silence> {
  return withTransaction(db, async (tx) => {
    const client = clientOf(tx);
    await client.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
    if (silence.ruleIds) {
      const { rows } = await client.query<{ id: string }>(
        'SELECT id FROM notification_rules WHERE organization_id = $1 AND id = ANY($2::uuid[])',
        [organizationId, silence.ruleIds],
      );
      const known = new Set(rows.map((row) => row.id));
      const unknown = silence.ruleIds.filter((id) => !known.has(id));
      if (unknown.length) throw new ValidationFailed([{ param: 'rule_ids', details: unknown.map((id) => messages.unknownMember(id)) }]);
    }
    const { rows: held } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM notification_silences WHERE organization_id = $1 AND ends_at > $2',
      [organizationId, now],
    );
    if (held[0]!.n >= SILENCE_LIMITS.maxUnexpiredPerOrganization) {
      throw new LimitReached(
        `This organization holds ${SILENCE_LIMITS.maxUnexpiredPerOrganization} silences that have not expired, the most it may. Delete (expire) those it no longer needs.`,
      );
    }
    const { rows } = await client.query<SilenceRow>(
      `INSERT INTO notification_silences (id, organization_id, filters, rule_ids, starts_at, ends_at, comment, added_date, last_update_date)
       VALUES (gen_random_uuid(), $1, $2::jsonb, $3::uuid[], $4, $5, $6, $7, $7)
       RETURNING ${COLUMNS}`,
      [organizationId, JSON.stringify(silence.filters), silence.ruleIds, silence.startsAt, silence.endsAt, silence.comment, now],
    );
    return toSilence(rows[0]!);
  });
}

/** SQL condition on a silence's status at $2. */
const STATUS_SQL: Record<SilenceStatus, string> = {
  pending: '(starts_at > $2 AND ends_at > $2)',
  active: '(starts_at <= $2 AND ends_at > $2)',
  expired: '(ends_at <= $2)',
};

/** A page of the organization's silences, latest first. */
export async function listSilences(db: Database, organizationId: string, query: SilenceListQuery, now: Date): Promise<{ total: number; silences: Silence[] }> {
  const statuses = query.statusIn?.length ? query.statusIn : null;
  const where = `organization_id = $1${statuses ? ` AND (${statuses.map((status) => STATUS_SQL[status]).join(' OR ')})` : ' AND $2::timestamptz IS NOT NULL'}`;
  const pool = poolOf(db);
  const [{ rows: counted }, { rows }] = await Promise.all([
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM notification_silences WHERE ${where}`, [organizationId, now]),
    pool.query<SilenceRow>(
      `SELECT ${COLUMNS} FROM notification_silences WHERE ${where} ORDER BY added_date DESC, id LIMIT $3 OFFSET $4`,
      [organizationId, now, query.pageSize, (query.page - 1) * query.pageSize],
    ),
  ]);
  return { total: counted[0]!.n, silences: rows.map(toSilence) };
}

export async function getSilence(db: Database, organizationId: string, silenceId: string): Promise<Silence> {
  // Another organization's silence and a malformed id are the same to the caller: not found.
  const { rows } = isUuid(silenceId)
    ? await poolOf(db).query<SilenceRow>(`SELECT ${COLUMNS} FROM notification_silences WHERE id = $1 AND organization_id = $2`, [silenceId, organizationId])
    : { rows: [] };
  if (!rows[0]) throw new NotFound('Notification silence not found.');
  return toSilence(rows[0]);
}

/** Ends a silence now (one that ended already stays as it was); it stays listed, as expired. */
export async function expireSilence(db: Database, organizationId: string, silenceId: string, now: Date): Promise<Silence> {
  await getSilence(db, organizationId, silenceId);
  const { rows } = await poolOf(db).query<SilenceRow>(
    `UPDATE notification_silences SET ends_at = LEAST(ends_at, $3), starts_at = LEAST(starts_at, $3), last_update_date = $3
      WHERE id = $1 AND organization_id = $2 AND ends_at > $3
      RETURNING ${COLUMNS}`,
    [silenceId, organizationId, now],
  );
  return rows[0] ? toSilence(rows[0]) : getSilence(db, organizationId, silenceId);
}
