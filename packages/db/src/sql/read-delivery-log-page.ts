import type { DeliveryKind, DeliveryLogQuery, DeliveryOrderingField } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';

// The kind follows from the period key (core's periodKeys: `i…`/`b…` instant, `t…` test, `f…` a
// flush of the rule, digest otherwise), a late round (`~…`) keeping its period's prefix.
const KIND_SQL = `CASE WHEN d.period_key LIKE 't%' THEN 'test'
                       WHEN d.period_key LIKE 'i%' OR d.period_key LIKE 'b%' OR (d.period_key LIKE 'f%' AND r.frequency = 'instant') THEN 'instant'
                       ELSE 'digest' END`;

const ORDER_SQL: Record<DeliveryOrderingField, string> = {
  period_end: 'd.created_at',
  period_start: 'COALESCE(d.first_event_at, d.created_at)',
  sent_at: 'd.sent_at',
  status: 'd.status::text',
  attempts: 'd.attempts',
};

/** A delivery of the log, as readDeliveryLogPage reads it. */
export interface DeliveryLogRow {
  id: string;
  team_member_id: string | null;
  email: string;
  kind: DeliveryKind;
  period_start: Date;
  period_end: Date;
  event_count: number;
  status: string;
  attempts: number;
  sent_at: Date | null;
  message_id: string | null;
  last_error: string | null;
}

/** A page of a rule's deliveries that match the query, newest first by default, and how many match in all. */
export async function readDeliveryLogPage(db: DatabaseHandle, ruleId: string, query: DeliveryLogQuery): Promise<{ total: number; rows: DeliveryLogRow[] }> {
  const pool = poolOf(db);
  const params: unknown[] = [ruleId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['d.rule_id = $1'];
  if (query.statusIn) where.push(`d.status::text = ANY(${param(query.statusIn)}::text[])`);
  if (query.kindIn) where.push(`(${KIND_SQL}) = ANY(${param(query.kindIn)}::text[])`);
  if (query.sentAtGte) where.push(`d.sent_at >= ${param(query.sentAtGte)}`);
  if (query.sentAtLte) where.push(`d.sent_at <= ${param(query.sentAtLte)}`);
  const orderBy = [...query.ordering.map(({ field, direction }) => `${ORDER_SQL[field]} ${direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`), 'd.id'].join(', ');
  const from = `FROM deliveries d JOIN notification_rules r ON r.id = d.rule_id WHERE ${where.join(' AND ')}`;
  const filterParams = [...params];
  const limit = param(query.pageSize);
  const offset = param((query.page - 1) * query.pageSize);
  const [{ rows: counted }, { rows }] = await Promise.all([
    pool.query<{ n: number }>(`SELECT count(*)::int AS n ${from}`, filterParams),
    pool.query<DeliveryLogRow>(
      `SELECT d.id, d.team_member_id, d.email, ${KIND_SQL} AS kind, COALESCE(d.first_event_at, d.created_at) AS period_start, d.created_at AS period_end,
              d.event_count, d.status::text AS status, d.attempts, d.sent_at, d.message_id, d.last_error
         ${from} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}`,
      params,
    ),
  ]);
  return { total: counted[0]!.n, rows };
}
