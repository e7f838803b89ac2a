import { poolOf, type DatabaseHandle } from '../client';

/** Sets a (rule, member) link subscribed, or unsubscribed since now (kept from the first opt-out); false when there is no such link. */
export async function updateSubscription(db: DatabaseHandle, ruleId: string, memberId: string, subscribed: boolean): Promise<boolean> {
  const { rowCount } = await poolOf(db).query(
    `UPDATE notification_rule_members SET unsubscribed_at = CASE WHEN $3 THEN NULL ELSE COALESCE(unsubscribed_at, now()) END
      WHERE rule_id = $1 AND team_member_id = $2`,
    [ruleId, memberId, subscribed],
  );
  return (rowCount ?? 0) > 0;
}
