import { clientOf, named, plainArray, rowAnswers, type Transaction } from '../client';

export interface Finding {
  ruleId: string;
  /** core's findingKey: a signed 64-bit integer in decimal. */
  findingKey: string;
}

/**
 * Takes findings as news for their rules at `at`, one statement for any number of distinct (rule,
 * finding) pairs: a finding is news when the rule never took it, or took it at least its
 * renotify_after_hours (as the rule's row says now) before `at`; its time is then moved to `at`.
 * Returns, position by position, whether each finding was news; the others are repeats. Concurrent
 * transactions meet on the row, so one finding is news for one of them only.
 */
export async function noticeFindings(tx: Transaction, findings: readonly Finding[], at: Date): Promise<boolean[]> {
  if (!findings.length) return [];
  const { rows } = await clientOf(tx).query<{ news: string }>(named('notice-findings',
    `WITH n AS (SELECT * FROM unnest($1::uuid[], $2::bigint[]) WITH ORDINALITY AS n(rule_id, finding_key, i)),
     taken AS (
       INSERT INTO rule_findings AS f (rule_id, finding_key, noticed_at)
       SELECT n.rule_id, n.finding_key, $3 FROM n ORDER BY n.rule_id, n.finding_key
       ON CONFLICT (rule_id, finding_key) DO UPDATE SET noticed_at = EXCLUDED.noticed_at
        WHERE f.noticed_at <= EXCLUDED.noticed_at - make_interval(hours => COALESCE(
                (SELECT r.renotify_after_hours FROM notification_rules r WHERE r.id = f.rule_id), 0))
       RETURNING rule_id, finding_key)
     SELECT string_agg(CASE WHEN t.rule_id IS NULL THEN '0' ELSE '1' END, '' ORDER BY n.i) AS news
       FROM n LEFT JOIN taken t ON t.rule_id = n.rule_id AND t.finding_key = n.finding_key`,
    [plainArray(findings.map((f) => f.ruleId)), plainArray(findings.map((f) => f.findingKey)), at],
  ));
  return rowAnswers(rows[0]?.news, findings.length, 'noticeFindings');
}
