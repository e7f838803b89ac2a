import { clientOf, named, type Transaction } from '../client';

/**
 * Moves every pending match of rules, whatever their periods, to one period due at `dueAt`, and the
 * repeats recorded in those periods with them (the e-mail counts them), in one statement for any
 * number of rules. Returns how many events' pending matches moved, by rule id (a digest match
 * recorded for several member zones counts once); a rule with none is not there.
 */
export async function movePendingMatches(tx: Transaction, ruleIds: readonly string[], periodKey: string, dueAt: Date): Promise<Map<string, number>> {
  if (!ruleIds.length) return new Map();
  const { rows } = await clientOf(tx).query<{ rule_id: string; n: number }>(named('move-pending-matches',
    `WITH periods AS (SELECT DISTINCT rule_id, period_key FROM matches WHERE rule_id = ANY($1::uuid[]) AND status = 'pending'),
          repeats AS (UPDATE matches m SET period_key = $2 FROM periods p
                       WHERE m.rule_id = p.rule_id AND m.period_key = p.period_key AND m.status = 'repeat'),
          moved AS (UPDATE matches SET period_key = $2, due_at = $3 WHERE rule_id = ANY($1::uuid[]) AND status = 'pending'
                    RETURNING rule_id, organization_id, event_id)
     SELECT rule_id::text AS rule_id, count(DISTINCT (organization_id, event_id))::int AS n FROM moved GROUP BY rule_id`,
    [[...new Set(ruleIds)], periodKey, dueAt],
  ));
  return new Map(rows.map((row) => [row.rule_id, row.n]));
}
