import { clientOf, named, type Transaction } from '../client';

/** Moves rules' pending matches of a period to another period key each (their due times unchanged): one statement for all. */
export async function rekeyPendingMatches(tx: Transaction, moves: ReadonlyArray<{ ruleId: string; fromKey: string; toKey: string }>): Promise<void> {
  if (!moves.length) return;
  await clientOf(tx).query(named('rekey-pending-matches',
    `UPDATE matches m SET period_key = v.to_key
       FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v(rule_id, from_key, to_key)
      WHERE m.rule_id = v.rule_id AND m.period_key = v.from_key AND m.status::text = 'pending'`,
    [moves.map((move) => move.ruleId), moves.map((move) => move.fromKey), moves.map((move) => move.toKey)],
  ));
}
