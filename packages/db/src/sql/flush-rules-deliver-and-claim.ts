/**
 * flush-rules-deliver-and-claim — flushDeliveries, one statement of an operator's flush: it moves
 * every pending match of the rules (and the repeats of the periods it empties) to one fresh period,
 * delivers them there as deliver-periods-and-claim does, makes the first deliveries claimed for this
 * process's sender, and counts the events taken per rule.
 *
 * Parameters:
 *   $1 uuid[]        the rules' ids (distinct)
 *   $2 text          the fresh period key the matches move to
 *   $3 timestamptz   now (the moved matches' due time)
 *   $4 int           how many of the deliveries to make claimed (ClaimsWhenMade.claimUpTo)
 *   $5 int           the newest events answered per claimed delivery (ClaimsWhenMade.eventLimit)
 * CTEs, in order:
 *   rule_status                              includes/rule-status, a row per rule
 *   taken                                    the UPDATE moving pending matches and their periods' repeats (TAKEN_COLUMNS)
 *   [members,] recipients, batches, held     includes/deliveries-from-matches, from taken
 *   inserted                                 deliveriesInsert('fresh', $4)
 *   claimed                                  includes/claim-made-deliveries
 *   repeats                                  the repeats moved
 *   answered                                 includes/claim-made-deliveries, repeats counted from `repeats`
 *   counted                                  counts: a JSON object, rule id → events taken
 * Returns: counts on every row, with a row per delivery made (delivery_id, delivery_rule_id and,
 *   when claimed, a ClaimedDelivery's columns, id null otherwise), or one row without.
 * Prepared as `flush-deliveries` (`flush-deliveries-probe` with the probe join).
 */
import { clientOf, named, type Transaction } from '../client';
import { MEMBERS_MATCH } from './includes/claimed-delivery';
import { answeredClaims, CLAIMED_INSERTED, madeDeliveries, NO_CLAIMS, type ClaimsWhenMade, type MadeDeliveries, type MadeRow } from './includes/claim-made-deliveries';
import { deliveriesFromTaken, deliveriesInsert, joinedName, membersJoinFor, TAKEN_COLUMNS } from './includes/deliveries-from-matches';
import { ruleStatus } from './includes/rule-status';

/** What flushDeliveries did: the deliveries it made (MadeDeliveries), and by rule id how many events' pending matches it took. */
export interface FlushedDeliveries extends MadeDeliveries {
  /** A digest match recorded for several member zones counts once; a rule without pending matches is not there. */
  events: Map<string, number>;
}

/**
 * An operator's flush of rules, in one statement for any number of them: every pending match of
 * each rule, whatever its period, moves to the period `periodKey` (due `now`) and is delivered
 * there as createDeliveries does, in the same update; the repeats recorded in the periods it
 * leaves move with it (the e-mail counts them). The caller holds the rules' rows, and the key is
 * fresh. Moving and delivering in one statement writes each match once, not twice: the second
 * write, with every index of the match updated again, was a large share of PostgreSQL's time in a
 * flush (measured in commit c6f7c00).
 * Deliveries made claimed (`claims`) are answered with their events, read from the matches the
 * statement took: sending them costs no claim statement, which read the matches again and wrote
 * each delivery's row a second time.
 */
export async function flushDeliveries(tx: Transaction, ruleIds: readonly string[], periodKey: string, now: Date, claims: ClaimsWhenMade = NO_CLAIMS): Promise<FlushedDeliveries> {
  if (!ruleIds.length) return { deliveries: [], events: new Map(), claimed: [] };
  const rules = [...new Set(ruleIds)];
  const join = membersJoinFor(rules.length);
  const { rows } = await clientOf(tx).query<MadeRow & { counts: string | null }>(named(joinedName('flush-deliveries', join),
    `WITH ${ruleStatus('notification_rules r WHERE r.id = ANY($1::uuid[])')}, taken AS (
       -- One pass over the rules' matches moves both: each pending match, taken, and each repeat of
       -- a period that has a pending match (it leaves with it; its status stays, so no recipient
       -- gets it and the count below leaves it out). The look for a pending match of a repeat's
       -- period runs for repeats only (OR's order), once each, as a probe (LIMIT: never a hash of
       -- every pending match). Finding the periods first, then their repeats, then the pending
       -- matches again read a flush's matches twice and sorted them.
       UPDATE matches m SET status = CASE WHEN m.status::text = 'pending' THEN rs.status ELSE m.status END,
                            period_key = $2, due_at = CASE WHEN m.status::text = 'pending' THEN $3 ELSE m.due_at END
         FROM rule_status rs
        WHERE m.rule_id = ANY($1::uuid[]) AND rs.rule_id = m.rule_id
          AND (m.status::text = 'pending'
               OR (m.status::text = 'repeat'
                   AND (SELECT true FROM matches p WHERE p.rule_id = m.rule_id AND p.period_key = m.period_key AND p.status::text = 'pending' LIMIT 1)))
       RETURNING ${TAKEN_COLUMNS}
     ), ${deliveriesFromTaken('$3', join)}, inserted AS (
     ${deliveriesInsert('fresh', '$4::int')}
     ), ${CLAIMED_INSERTED}, repeats AS MATERIALIZED (
       -- The repeats moved (usually none), read once rather than from taken for each claimed delivery.
       SELECT rule_id, audience, created_at FROM taken WHERE status::text = 'repeat'
     ), ${answeredClaims(`(SELECT count(*)::int FROM repeats m WHERE m.rule_id = c.rule_id::uuid AND ${MEMBERS_MATCH})`, '$5::int')}, counted AS (
       -- A rule's matches are its organization's events: their ids alone tell them apart (comparing
       -- records made this count a visible part of the statement, measured in commit 1a601d5).
       SELECT json_object_agg(rule_id, events)::text AS counts
         FROM (SELECT rule_id, count(DISTINCT event_id)::int AS events FROM taken WHERE status::text <> 'repeat' GROUP BY rule_id) s
     )
     -- The counts on every row, with a delivery each (claimed or not), or one row without. A claimed
     -- one's repeats are those the statement moved to its period (the key is fresh).
     SELECT a.counts, x.*
       FROM counted a LEFT JOIN (
         SELECT i.id AS delivery_id, i.rule_id AS delivery_rule_id, y.* FROM inserted i LEFT JOIN answered y ON y.id = i.id
       ) x ON true`,
    [rules, periodKey, now, Math.max(0, Math.floor(claims.claimUpTo)), claims.eventLimit],
  ));
  const counts = rows[0]?.counts ? (JSON.parse(rows[0].counts) as Record<string, number>) : {};
  return { ...madeDeliveries(rows, ['counts']), events: new Map(Object.entries(counts)) };
}
