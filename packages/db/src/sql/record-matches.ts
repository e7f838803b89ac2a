import { clientOf, type Transaction } from '../client';

export interface NewMatch {
  ruleId: string;
  organizationId: string;
  eventId: string;
  periodKey: string;
  dueAt: Date;
}

/**
 * Records matches as pending, one statement for any number. A (rule, event) pair recorded before
 * is left as it is; returns the matches this call recorded.
 */
export async function recordMatches(tx: Transaction, matches: readonly NewMatch[]): Promise<NewMatch[]> {
  if (!matches.length) return [];
  const { rows } = await clientOf(tx).query<{ rule_id: string; organization_id: string; event_id: string; period_key: string; due_at: Date }>(
    `INSERT INTO matches (rule_id, organization_id, event_id, period_key, due_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
     ON CONFLICT (rule_id, organization_id, event_id) DO NOTHING
     RETURNING rule_id, organization_id, event_id, period_key, due_at`,
    [
      matches.map((m) => m.ruleId),
      matches.map((m) => m.organizationId),
      matches.map((m) => m.eventId),
      matches.map((m) => m.periodKey),
      matches.map((m) => m.dueAt),
    ],
  );
  return rows.map((row) => ({ ruleId: row.rule_id, organizationId: row.organization_id, eventId: row.event_id, periodKey: row.period_key, dueAt: row.due_at }));
}
