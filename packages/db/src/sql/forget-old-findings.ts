import { poolOf, type DatabaseHandle } from '../client';

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
