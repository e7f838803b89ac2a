import { clientOf, named, poolOf, type DatabaseHandle, type Transaction } from '../client';

export interface Finding {
  ruleId: string;
  /** core's findingKey: a signed 64-bit integer in decimal. */
  findingKey: string;
}

/**
 * Takes findings as news for their rules at `at`, one statement for any number (each (rule,
 * fingerprint) once): a finding is news when the rule never took it, or took it at least its
 * renotify_after_hours (as the rule's row says now) before `at`; its time is then moved to `at`. Returns the keys
 * `<rule>|<finding key>` that were news; the others are repeats. Concurrent transactions meet on
 * the row, so one finding is news for one of them only.
 */
export async function noticeFindings(tx: Transaction, findings: readonly Finding[], at: Date): Promise<Set<string>> {
  if (!findings.length) return new Set();
  const { rows } = await clientOf(tx).query<{ rule_id: string; finding_key: string }>(named('notice-findings',
    `INSERT INTO rule_findings AS f (rule_id, finding_key, noticed_at)
     SELECT n.rule_id, n.finding_key, $3 FROM unnest($1::uuid[], $2::bigint[]) AS n(rule_id, finding_key)
      ORDER BY n.rule_id, n.finding_key
     ON CONFLICT (rule_id, finding_key) DO UPDATE SET noticed_at = EXCLUDED.noticed_at
      WHERE f.noticed_at <= EXCLUDED.noticed_at - make_interval(hours => COALESCE(
              (SELECT r.renotify_after_hours FROM notification_rules r WHERE r.id = f.rule_id), 0))
     RETURNING rule_id, finding_key::text`,
    [findings.map((f) => f.ruleId), findings.map((f) => f.findingKey), at],
  ));
  return new Set(rows.map((row) => `${row.rule_id}|${row.finding_key}`));
}

/**
 * Forgets findings whose rule would take them as news anyway (older than its renotify_after_hours,
 * or it has none), and those of rules that are gone (rule_findings has no foreign key onto them).
 */
export async function forgetOldFindings(db: DatabaseHandle, at: Date): Promise<number> {
  const { rowCount } = await poolOf(db).query(
    `DELETE FROM rule_findings f
      WHERE NOT EXISTS (SELECT 1 FROM notification_rules r
                         WHERE r.id = f.rule_id AND r.renotify_after_hours IS NOT NULL
                           AND f.noticed_at > $1::timestamptz - make_interval(hours => r.renotify_after_hours))`,
    [at],
  );
  return rowCount ?? 0;
}
