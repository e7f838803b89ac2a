import { clientOf, named, type Transaction } from '../client';

/** Of rules' periods, those delivered before (with deliveries under their period key), as `rule id|period key`. */
export async function periodsWithDeliveries(tx: Transaction, periods: ReadonlyArray<{ ruleId: string; periodKey: string }>): Promise<Set<string>> {
  if (!periods.length) return new Set();
  const { rows } = await clientOf(tx).query<{ key: string }>(named('periods-with-deliveries',
    `SELECT p.rule_id::text || '|' || p.period_key AS key
       FROM unnest($1::uuid[], $2::text[]) AS p(rule_id, period_key)
      WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.rule_id = p.rule_id AND d.period_key = p.period_key)`,
    [periods.map((period) => period.ruleId), periods.map((period) => period.periodKey)],
  ));
  return new Set(rows.map((row) => row.key));
}
