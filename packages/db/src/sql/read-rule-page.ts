import type { Frequency, RuleListQuery, Scope } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

/**
 * What each ordering field sorts by. Clients see scope and frequency as strings, so they sort
 * as text (a PostgreSQL enum would sort in declaration order); names sort case-insensitively,
 * with the exact name breaking ties, whatever the database's collation.
 */
const ORDER_COLUMNS: Record<RuleListQuery['ordering'][number]['field'], readonly string[]> = {
  name: ['lower(r.name)', 'r.name'],
  scope: ['r.scope::text'],
  frequency: ['r.frequency::text'],
  enabled: ['r.enabled'],
  added_date: ['r.added_date'],
  last_update_date: ['r.last_update_date'],
};

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** A row of readRulePage: the total, and a rule of the page (its id null when the page is empty). */
export interface ListRow {
  total: string;
  id: string | null;
  name: string;
  scope: Scope;
  frequency: Frequency;
  delivery_hour: number | null;
  delivery_day_of_week: number | null;
  members: Array<{ team_member_uuid: string; email: string; subscribed: boolean }>;
  enabled: boolean;
  renotify_after_hours: number | null;
  added_date: Date;
  last_update_date: Date;
}

/**
 * A page of the organization's rules that match the query, each row with the total of matches
 * (`total`; one row with a null id when the page is empty). The list is the API's busiest read.
 * One statement, one round trip: the total is counted on the table (indexes, no row copies), the
 * page is read with ORDER BY … LIMIT, and each rule's members come from index lookups.
 */
export async function readRulePage(db: DatabaseHandle, organizationId: string, query: RuleListQuery): Promise<ListRow[]> {
  const params: unknown[] = [organizationId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['r.organization_id = $1'];
  if (query.nameContains !== undefined) where.push(`r.name ILIKE ${param(likePattern(query.nameContains))}`);
  if (query.nameNotContains !== undefined) where.push(`r.name NOT ILIKE ${param(likePattern(query.nameNotContains))}`);
  if (query.scopeIn) where.push(`r.scope = ANY(${param(query.scopeIn)}::scope[])`);
  if (query.scopeNin) where.push(`r.scope <> ALL(${param(query.scopeNin)}::scope[])`);
  if (query.frequencyIn) where.push(`r.frequency = ANY(${param(query.frequencyIn)}::frequency[])`);
  if (query.frequencyNin) where.push(`r.frequency <> ALL(${param(query.frequencyNin)}::frequency[])`);
  const memberExists = (ids: string[]) =>
    `EXISTS (SELECT 1 FROM notification_rule_members f WHERE f.rule_id = r.id AND f.team_member_id = ANY(${param(ids)}::uuid[]))`;
  if (query.membersIn) where.push(memberExists(query.membersIn));
  if (query.membersNin) where.push(`NOT ${memberExists(query.membersNin)}`);
  if (query.enabled !== undefined) where.push(`r.enabled = ${param(query.enabled)}`);
  if (query.addedDateLte) where.push(`r.added_date <= ${param(query.addedDateLte)}`);
  if (query.addedDateGte) where.push(`r.added_date >= ${param(query.addedDateGte)}`);
  if (query.lastUpdateDateLte) where.push(`r.last_update_date <= ${param(query.lastUpdateDateLte)}`);
  if (query.lastUpdateDateGte) where.push(`r.last_update_date >= ${param(query.lastUpdateDateGte)}`);
  // The id breaks ties so that pages never overlap or skip a rule.
  const orderBy = [
    ...query.ordering.flatMap((o) => ORDER_COLUMNS[o.field].map((column) => `${column} ${o.direction === 'desc' ? 'DESC' : 'ASC'}`)),
    'r.id ASC',
  ].join(', ');
  const limit = param(query.pageSize);
  const offset = param((query.page - 1) * query.pageSize);
  const filter = where.join(' AND ');
  const sql = `
    WITH page AS (
      SELECT r.id, r.name, r.scope, r.frequency, r.delivery_hour, r.delivery_day_of_week, r.enabled, r.renotify_after_hours, r.added_date, r.last_update_date
        FROM notification_rules r WHERE ${filter}
       ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
    )
    SELECT t.total, r.*, COALESCE(pm.members, '[]'::json) AS members
      FROM (SELECT count(*) AS total FROM notification_rules r WHERE ${filter}) t
      LEFT JOIN (
        page r LEFT JOIN LATERAL (
          SELECT json_agg(json_build_object('team_member_uuid', m.id, 'email', m.email, 'subscribed', rm.unsubscribed_at IS NULL) ORDER BY m.email) AS members
            FROM notification_rule_members rm JOIN team_members m ON m.id = rm.team_member_id
           WHERE rm.rule_id = r.id
        ) pm ON true
      ) ON true
     ORDER BY ${orderBy}`;
  const { rows } = await poolOf(db).query<ListRow>(sql, params);
  return rows;
}
