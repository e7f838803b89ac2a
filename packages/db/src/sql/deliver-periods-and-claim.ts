/**
 * deliver-periods-and-claim — createDeliveries, one statement of three stages' work: it takes the
 * pending matches of (rule, period) pairs (delivered, or dropped), makes their deliveries (quiet
 * hours' batches held back as matches of their own), and makes the first of them claimed for this
 * process's sender, answered as a claim.
 *
 * Parameters:
 *   $1 uuid[]        the pairs' rule ids
 *   $2 text[]        the pairs' period keys
 *   $3 timestamptz   now
 *   $4 int           how many of the deliveries to make claimed (ClaimsWhenMade.claimUpTo)
 *   $5 int           the newest events answered per claimed delivery (ClaimsWhenMade.eventLimit)
 * CTEs, in order:
 *   rule_status                              includes/rule-status, a row per distinct pair
 *   taken                                    the UPDATE of the pairs' pending matches (TAKEN_COLUMNS)
 *   [members,] recipients, batches, held     includes/deliveries-from-matches, from taken
 *   inserted                                 deliveriesInsert('any', $4)
 *   claimed, answered                        includes/claim-made-deliveries
 * Returns: a row per delivery made: delivery_id, delivery_rule_id and, when claimed, a
 *   ClaimedDelivery's columns (id null otherwise); no row when none was made.
 * Prepared as `create-deliveries` (`create-deliveries-probe` with the probe join).
 */
import { clientOf, named, type Transaction } from '../client';
import { periodRepeats } from './includes/claimed-delivery';
import { answeredClaims, CLAIMED_INSERTED, madeDeliveries, NO_CLAIMS, type ClaimsWhenMade, type MadeDeliveries, type MadeRow } from './includes/claim-made-deliveries';
import { deliveriesFromTaken, deliveriesInsert, joinedName, membersJoinFor, TAKEN_COLUMNS } from './includes/deliveries-from-matches';
import { ruleStatus } from './includes/rule-status';

/**
 * Turns the pending matches of (rule, period) pairs into deliveries, one per member, in one
 * statement for any number of pairs: the matches become `delivered` (or `dropped`, for a
 * disabled rule or one without subscribed members) and each subscribed member (not opted out
 * through an unsubscribe link) gets one delivery per (rule, period) of the matches that are theirs
 * (audience '': every member; a time zone: the members in it since before the match was made; '@<id>': that member),
 * unique per (rule, member, period) across the months deliveries are partitioned by.
 *
 * Quiet hours: a member in theirs at `now` (in their zone) gets an instant or hourly batch that has
 * no critical event as matches of their own, held until the quiet hours end (period key
 * `q<epoch ms>`, see periodKeys); everything held for them then goes out as one e-mail.
 * Returns the deliveries created, with those made claimed (`claims`) answered as a claim would.
 */
export async function createDeliveries(tx: Transaction, periods: ReadonlyArray<{ ruleId: string; periodKey: string }>, now: Date, claims: ClaimsWhenMade = NO_CLAIMS): Promise<MadeDeliveries> {
  if (!periods.length) return { deliveries: [], claimed: [] };
  const join = membersJoinFor(periods.length);
  const { rows } = await clientOf(tx).query<MadeRow>(named(joinedName('create-deliveries', join),
    `WITH ${ruleStatus('(SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]) AS p(rule_id, period_key)) w JOIN notification_rules r ON r.id = w.rule_id', ', w.period_key')}, taken AS (
       UPDATE matches m SET status = rs.status
         FROM rule_status rs
        -- status as text: never through the status index, whose pending rows may be a whole day's
        -- digests; the (rule, period) index finds a period's matches however old the statistics
        -- this prepared plan was made with (a fresh month's partition has none).
        WHERE m.rule_id = rs.rule_id AND m.period_key = rs.period_key AND m.status::text = 'pending'
       RETURNING ${TAKEN_COLUMNS}
     ), ${deliveriesFromTaken('$3', join)}, inserted AS (
     ${deliveriesInsert('any', '$4::int')}
     ), ${CLAIMED_INSERTED}, ${answeredClaims(periodRepeats('c.rule_id::uuid'), '$5::int')}
     SELECT i.id AS delivery_id, i.rule_id AS delivery_rule_id, y.* FROM inserted i LEFT JOIN answered y ON y.id = i.id`,
    [periods.map((p) => p.ruleId), periods.map((p) => p.periodKey), now, Math.max(0, Math.floor(claims.claimUpTo)), claims.eventLimit],
  ));
  return madeDeliveries(rows);
}
