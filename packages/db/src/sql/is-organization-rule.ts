import { poolOf, type DatabaseHandle } from '../client';

/** Whether the rule (a uuid) is the organization's. */
export async function isOrganizationRule(db: DatabaseHandle, organizationId: string, ruleId: string): Promise<boolean> {
  const { rows } = await poolOf(db).query('SELECT 1 FROM notification_rules WHERE id = $1 AND organization_id = $2', [ruleId, organizationId]);
  return rows.length > 0;
}
