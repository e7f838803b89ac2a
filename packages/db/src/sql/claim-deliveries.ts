import { hotPoolOf, named, type DatabaseHandle } from '../client';
import { CLAIMED_DELIVERY_COLUMNS, claimedEvents, MEMBERS_MATCH, periodRepeats, type ClaimedDelivery } from './includes/claimed-delivery';
import { mailEventOfStored } from './includes/event-json';

/**
 * Claims deliveries for sending (pending → sending, attempts + 1) and reads each one's period's
 * events, in one round trip for all of them. A delivery another sender claimed less than
 * `claimTimeoutMs` ago is left to it; an older claim is taken for abandoned (its process died).
 * Statuses are compared as text, which no index serves: the planner then finds deliveries by id
 * and a period's matches by (rule_id, period_key), never by walking every row of a status (the
 * status indexes), which it chose when its statistics were older than a wave of status changes
 * (they said few matches were delivered, few deliveries pending): in a wave of digests each claim
 * then read every match delivered so far, a cost that grew with the wave (measured in commit c5ed65e).
 * Returns the claimed ones by id; one not there was not claimed: sent, cancelled or failed
 * already, being sent elsewhere, or unknown.
 */
export async function claimDeliveries(db: DatabaseHandle, deliveryIds: readonly string[], claimTimeoutMs: number, eventLimit: number): Promise<Map<string, ClaimedDelivery>> {
  if (!deliveryIds.length) return new Map();
  const { rows } = await hotPoolOf(db).query<ClaimedDelivery>(named('claim-deliveries',
    `WITH claimed AS (
       UPDATE deliveries d SET status = 'sending', attempts = d.attempts + 1, updated_at = now()
         FROM notification_rules r, organizations o
        WHERE d.id = ANY($1::uuid[]) AND r.id = d.rule_id AND o.id = r.organization_id
          AND (d.status::text = 'pending' OR (d.status::text = 'sending' AND d.updated_at < now() - make_interval(secs => $2::double precision / 1000)))
        RETURNING d.id, d.rule_id, d.team_member_id, d.email, d.period_key, d.attempts, d.first_event_at, r.name AS rule_name, r.scope, r.frequency,
                  o.name AS organization_name, o.timezone, d.test_event, d.time_zone, d.zone_since
     )
     SELECT ${CLAIMED_DELIVERY_COLUMNS},
            CASE WHEN c.test_event IS NOT NULL THEN json_build_array(${mailEventOfStored('c.test_event')})::text ELSE COALESCE(p.events, '[]') END AS events,
            CASE WHEN c.test_event IS NOT NULL THEN 1 ELSE COALESCE(p.events_shown, 0) END AS events_shown,
            CASE WHEN c.test_event IS NULL THEN COALESCE(p.event_ids, '[]') END AS event_ids,
            ${periodRepeats('c.rule_id')} AS repeats
       FROM claimed c LEFT JOIN team_members t ON t.id = c.team_member_id
       LEFT JOIN LATERAL (
         ${claimedEvents('matches', `m.rule_id = c.rule_id AND m.period_key = c.period_key AND m.status::text = 'delivered' AND ${MEMBERS_MATCH}`, '$3')}
       ) p ON c.test_event IS NULL`,
    [deliveryIds, claimTimeoutMs, eventLimit],
  ));
  return new Map(rows.map((row) => [row.id, row]));
}
