import { poolOf, type DatabaseHandle } from '../client';

/** What the unsubscribe page reads of a (rule, member) link. */
export interface SubscriptionRow {
  rule_name: string;
  organization_name: string;
  email: string;
  subscribed: boolean;
}

/** The (rule, member) link with its rule's, organization's and member's names, or null when the member is not among the rule's members. */
export async function readSubscription(db: DatabaseHandle, ruleId: string, memberId: string): Promise<SubscriptionRow | null> {
  const { rows } = await poolOf(db).query<SubscriptionRow>(
    `SELECT r.name AS rule_name, o.name AS organization_name, t.email, rm.unsubscribed_at IS NULL AS subscribed
       FROM notification_rule_members rm
       JOIN notification_rules r ON r.id = rm.rule_id
       JOIN organizations o ON o.id = r.organization_id
       JOIN team_members t ON t.id = rm.team_member_id
      WHERE rm.rule_id = $1 AND rm.team_member_id = $2`,
    [ruleId, memberId],
  );
  return rows[0] ?? null;
}
