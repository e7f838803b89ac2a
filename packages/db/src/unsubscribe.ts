import { poolOf, type Database } from './client';

/** What the unsubscribe page says of a (rule, member) link. */
export interface Subscription {
  ruleName: string;
  organizationName: string;
  email: string;
  subscribed: boolean;
}

/** The subscription a link names, or null when the member is no longer among the rule's members (or either is gone). */
export async function findSubscription(db: Database, ruleId: string, memberId: string): Promise<Subscription | null> {
  const { rows } = await poolOf(db).query<{ rule_name: string; organization_name: string; email: string; subscribed: boolean }>(
    `SELECT r.name AS rule_name, o.name AS organization_name, t.email, rm.unsubscribed_at IS NULL AS subscribed
       FROM notification_rule_members rm
       JOIN notification_rules r ON r.id = rm.rule_id
       JOIN organizations o ON o.id = r.organization_id
       JOIN team_members t ON t.id = rm.team_member_id
      WHERE rm.rule_id = $1 AND rm.team_member_id = $2`,
    [ruleId, memberId],
  );
  const row = rows[0];
  return row ? { ruleName: row.rule_name, organizationName: row.organization_name, email: row.email, subscribed: row.subscribed } : null;
}

/** Opts a member out of (or back into) a rule's e-mails; idempotent. False when the link names no member of the rule. */
export async function setSubscribed(db: Database, ruleId: string, memberId: string, subscribed: boolean): Promise<boolean> {
  const { rowCount } = await poolOf(db).query(
    `UPDATE notification_rule_members SET unsubscribed_at = CASE WHEN $3 THEN NULL ELSE COALESCE(unsubscribed_at, now()) END
      WHERE rule_id = $1 AND team_member_id = $2`,
    [ruleId, memberId, subscribed],
  );
  return (rowCount ?? 0) > 0;
}
