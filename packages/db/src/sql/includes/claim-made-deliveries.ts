/**
 * includes/claim-made-deliveries — deliveries a statement makes claimed for this process's sender
 * as it makes them, answered as claimDeliveries answers a claim.
 *
 * Takes:
 *   CTE inserted     deliveriesInsert's rows (includes/deliveries-from-matches); the claimed are 'sending'
 *   CTE recipients   deliveriesFromTaken's: the events of each claimed delivery's batch
 *   repeats          (claimedInsertedRows, answeredClaims) an SQL int over `c`: its period's repeats
 *   limit            (claimedInsertedRows, answeredClaims) an SQL int: the newest events answered per delivery
 * Defines:
 *   CLAIMED_INSERTED     the CTE claimed: the claimed rows of `inserted` with their rule's and
 *                        organization's columns, as includes/claimed-delivery reads a delivery `c`
 *   answeredClaims(…)    the CTE answered (MATERIALIZED): claimedInsertedRows of `claimed`
 * Returns:
 *   claimedInsertedRows(…)  a SELECT of ClaimedDelivery rows, one per row of `claimed`
 *   madeDeliveries(…)       (TypeScript) MadeDeliveries from the rows (MadeRow) of a statement that
 *                           answers each delivery made as delivery_id, delivery_rule_id and its claim
 * Used by: record-matches-deliver-and-claim-first, deliver-periods-and-claim, flush-rules-deliver-and-claim.
 */
import { CLAIMED_DELIVERY_COLUMNS, claimedAnswer, claimedEvents, type ClaimedDelivery } from './claimed-delivery';

/** A delivery createDeliveries made: its id and its rule's. */
export interface CreatedDelivery {
  id: string;
  ruleId: string;
}

/**
 * Deliveries a statement makes claimed for this process's sender as it makes them (`sending`, their
 * first attempt counted), answered as claimDeliveries would answer them, so that sending them costs
 * no claim statement of its own: an instant alert's claim was a second write of its delivery's row
 * (its five indexes again) and a round trip, a large share of PostgreSQL's CPU per event (measured
 * in commit 5bb244f). At most `claimUpTo`, as many as the sender has room for: it sends
 * them as they come. Each answers its newest `eventLimit` events (claimDeliveries' eventLimit).
 * The caller must hand them to its sender, or give them back (releaseDeliveries): a delivery left
 * claimed is taken for abandoned only after the claim timeout.
 */
export interface ClaimsWhenMade {
  claimUpTo: number;
  eventLimit: number;
}

/** None made claimed. */
export const NO_CLAIMS: ClaimsWhenMade = { claimUpTo: 0, eventLimit: 0 };

/** What a statement that makes deliveries answers: the deliveries made, and those of them made claimed (ClaimsWhenMade). */
export interface MadeDeliveries {
  deliveries: CreatedDelivery[];
  claimed: ClaimedDelivery[];
}

/**
 * The CTE `claimed`: the deliveries of `inserted` (deliveriesInsert with `claimUpTo`) made claimed,
 * with what a claim reads of their rule and organization (claimDeliveries' `claimed`).
 */
export const CLAIMED_INSERTED = `claimed AS (
       SELECT d.id, d.rule_id, d.team_member_id, d.email, d.period_key, d.attempts, d.first_event_at, d.time_zone, d.zone_since,
              r.name AS rule_name, r.scope, r.frequency, o.name AS organization_name, o.timezone, NULL::jsonb AS test_event
         FROM inserted d JOIN notification_rules r ON r.id = d.rule_id::uuid JOIN organizations o ON o.id = r.organization_id
        WHERE d.status = 'sending'
     )`;

/**
 * Each delivery `c` of CLAIMED_INSERTED as claimDeliveries answers one: its events are its batch's
 * rows of `recipients` (the matches the statement writes are not there for it to read), the newest
 * `limit` (SQL) when given; `repeats` (SQL) counts the period's repeats that are its member's. The
 * same events as a claim's, which reads every delivered match of the period that is the member's,
 * but in one case: a period delivered before with every batch held for quiet hours (its matches
 * delivered, no delivery made) and delivered again for late matches; a claim would show the held
 * events again, which their own e-mail shows, and this does not (nor does the delivery's count).
 */
export const claimedInsertedRows = (repeats: string, limit?: string): string => `SELECT ${CLAIMED_DELIVERY_COLUMNS}, ev.events, ev.events_shown, ev.event_ids, ${repeats} AS repeats
           FROM claimed c LEFT JOIN team_members t ON t.id = c.team_member_id
          CROSS JOIN LATERAL (
            ${claimedEvents('recipients', 'm.rule_id = c.rule_id::uuid AND m.period_key = c.period_key AND m.member_id = c.team_member_id AND m.quiet_until IS NULL', limit)}
          ) ev`;

/**
 * The CTE `answered`: each delivery of CLAIMED_INSERTED answered (claimedInsertedRows, `repeats`
 * its count of the period's repeats, `limit` its event limit), worked out once.
 * Joined to the deliveries made as a subquery, it was worked out again for each of them (a kept
 * plan's nested loop, one row estimated for each).
 */
export const answeredClaims = (repeats: string, limit: string): string => `answered AS MATERIALIZED (
       ${claimedInsertedRows(repeats, limit)}
     )`;

/** A row of a statement that makes deliveries: a delivery made (its id null when it made none) and, if claimed, its claim's answer. */
export type MadeRow = { delivery_id: string | null; delivery_rule_id: string | null } & ({ id: null } | ClaimedDelivery);

/** The deliveries of a statement's rows (MadeRow), and the claimed ones' answers without the statement's own columns (`own`). */
export function madeDeliveries(rows: readonly MadeRow[], own: readonly string[] = []): MadeDeliveries {
  const deliveries: CreatedDelivery[] = [];
  const claimed: ClaimedDelivery[] = [];
  for (const row of rows) {
    if (row.delivery_id === null) continue;
    deliveries.push({ id: row.delivery_id, ruleId: row.delivery_rule_id! });
    if (row.id !== null) claimed.push(claimedAnswer(row, ['delivery_id', 'delivery_rule_id', ...own]));
  }
  return { deliveries, claimed };
}
