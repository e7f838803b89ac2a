import { poolOf, type DatabaseHandle } from '../client';
import type { DeliveryEvent } from './includes/claimed-delivery';

export interface TestDelivery {
  id: string;
  team_member_id: string;
  email: string;
  status: 'pending';
}

/**
 * A test send's deliveries: one per member, under a test period key of their own (so no period of
 * the rule's matches is touched), each carrying the one event its e-mail shows.
 */
export async function createTestDeliveries(db: DatabaseHandle, ruleId: string, memberIds: readonly string[], periodKey: string, event: DeliveryEvent): Promise<TestDelivery[]> {
  const { rows } = await poolOf(db).query<TestDelivery>(
    `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, event_count, first_event_at, test_event)
     SELECT gen_random_uuid(), $1, t.id, t.email, $2, 1, now(), $4::jsonb
       FROM unnest($3::uuid[]) WITH ORDINALITY AS m(id, position) JOIN team_members t ON t.id = m.id
      ORDER BY m.position
     RETURNING id, team_member_id, email, status`,
    [ruleId, periodKey, memberIds, JSON.stringify(event)],
  );
  return rows;
}
