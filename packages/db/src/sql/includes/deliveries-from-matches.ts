/**
 * includes/deliveries-from-matches — from the matches a statement takes to the deliveries it
 * inserts: one per member and (rule, period), quiet hours' batches held back as matches of their own.
 *
 * Takes:
 *   CTE taken        the matches the statement took, with TAKEN_COLUMNS: rule_id, period_key,
 *                    organization_id, event_id, event_received_at, audience, created_at, status
 *                    (only rows now 'delivered' reach a recipient)
 *   now              (deliveriesFromTaken) an SQL timestamptz: the moment, e.g. `$3`
 *   join             (deliveriesFromTaken) a MembersJoin: how a match meets its rule's members
 *   keys             (deliveriesInsert) 'any': skip keys delivered in earlier months; 'fresh': a key of the moment
 *   claimUpTo        (deliveriesInsert) an SQL integer: how many of the deliveries are made claimed
 * Defines (deliveriesFromTaken: these CTEs, comma-separated, without a leading or trailing comma):
 *   CTE members      ('scan' only) the subscribed members of the taken rules: rule_id, member_id,
 *                    email, zone, zone_since, quiet_start_hour, quiet_end_hour
 *   CTE recipients   a row per delivered match and member: rule_id, period_key, organization_id,
 *                    event_id, event_received_at, audience, member_id, email, zone, zone_since, quiet_until
 *   CTE batches      a row per (rule, period, member): rule_id, period_key, member_id, email, zone,
 *                    zone_since, event_count, first_event_at, quiet_until (null: not held)
 *   CTE held         the INSERT of the held batches' matches (period key q<epoch ms>); read by nothing
 * Returns:
 *   deliveriesInsert(…)  the INSERT of deliveries from `batches`, the body of a CTE its callers name
 *                        `inserted`: RETURNING id, rule_id (text), status, team_member_id, email,
 *                        period_key, attempts, first_event_at, time_zone, zone_since
 *   joinedName(…)        a statement's prepared name for its join (the texts differ)
 *   membersJoinFor(…)    the join for a call of that many (rule, period) pairs or rules
 * Used by: record-matches-deliver-and-claim-first, deliver-periods-and-claim, flush-rules-deliver-and-claim.
 */

/** What deliveriesFromTaken reads of the matches taken (`taken`), as an UPDATE of matches `m` returns them. */
export const TAKEN_COLUMNS = 'm.rule_id, m.period_key, m.organization_id, m.event_id, m.event_received_at, m.audience, m.created_at, m.status';

/**
 * How deliveriesFromTaken meets each delivered match with its rule's subscribed members:
 * - `scan`: the members of the call's rules are read once a rule (the CTE `members`), and the
 *   matches joined to those rows as the planner estimates both (one row each): a nested loop that
 *   scans the call's member rows for each match. The cheapest for a call of few rules, but
 *   quadratic in the call's size.
 * - `probe`: each match's members are looked up by index (the rule's members, their rows, their
 *   organization's zone): linear, and the cheaper from about PROBE_MEMBERS_FROM pairs a call
 *   (measured in commit 91376c0).
 * membersJoinFor chooses by the call's number of rules or periods.
 */
export type MembersJoin = 'scan' | 'probe';

/** From this many (rule, period) pairs, or rules, in a call, its members are probed for each match (MembersJoin). */
export const PROBE_MEMBERS_FROM = 50;

export const membersJoinFor = (pairs: number): MembersJoin => (pairs >= PROBE_MEMBERS_FROM ? 'probe' : 'scan');

/** A member's columns as recipients reads them (`mb`), from notification_rule_members rm, team_members tm and organizations o. */
const MEMBER_COLUMNS = 'rm.rule_id, tm.id AS member_id, tm.email, COALESCE(tm.timezone, o.timezone) AS zone, tm.zone_since, tm.quiet_start_hour, tm.quiet_end_hour';
const MEMBER_TABLES = `notification_rule_members rm
         JOIN team_members tm ON tm.id = rm.team_member_id
         JOIN organizations o ON o.id = tm.organization_id`;

/** Each MembersJoin as deliveriesFromTaken writes it: the CTEs it needs before `recipients`, and the join in it. */
const MEMBERS_JOINS: Record<MembersJoin, { ctes: string; join: string }> = {
  scan: {
    ctes: `members AS MATERIALIZED (
       -- The subscribed members of the rules taken, read once a rule: joined to every match, a
       -- member's three rows were read again for each match of its rule (measured in commit
       -- be7b56c). Its kept plan hashes the taken rules, then probes the index once each. Only
       -- rules with a delivered match: a disabled rule's members would reach no recipient.
       SELECT ${MEMBER_COLUMNS}
         FROM ${MEMBER_TABLES}
        WHERE rm.rule_id IN (SELECT rule_id FROM taken WHERE status = 'delivered') AND rm.unsubscribed_at IS NULL
     ), `,
    join: 'JOIN members mb ON mb.rule_id = t.rule_id',
  },
  probe: {
    ctes: '',
    join: `JOIN LATERAL (SELECT ${MEMBER_COLUMNS}
                        FROM ${MEMBER_TABLES}
                       WHERE rm.rule_id = t.rule_id AND rm.unsubscribed_at IS NULL) mb ON true`,
  },
};

/**
 * From the matches taken (the CTE `taken`, of TAKEN_COLUMNS) to deliveries, with `now` the moment's
 * parameter: the CTEs that find each member's batch and hold quiet hours' ones, then the INSERT
 * (deliveriesInsert). Only the rows of `taken` now `delivered` reach a recipient: any other (a
 * dropped match, a repeat a flush moved with its period) is delivered to no one. `join` is how a
 * match meets its members (MembersJoin); the text differs, so each has a statement name of its own.
 */
export const deliveriesFromTaken = (now: string, join: MembersJoin): string => `${MEMBERS_JOINS[join].ctes}recipients AS (
       -- quiet_until is its batch's (rule, period, member: the window), on each of its rows: the
       -- held ones are inserted below from these rows, not by joining them back to their batches,
       -- a join of two CTE scans the planner (one row estimated for each) made a nested loop, a
       -- large share of the statement's time (measured in commit ed7d58b).
       -- An event's row is read only for a member with quiet hours (is it critical?): a match has
       -- its event's keys and received_at, and lives and is dropped with it (its month). Looking up
       -- every match's event made every flush dearer (measured in commit 3a761d3).
       SELECT t.rule_id, t.period_key, t.organization_id, t.event_id, t.event_received_at, t.audience,
              mb.member_id, mb.email, mb.zone, mb.zone_since,
              CASE WHEN mb.quiet_start_hour IS NOT NULL AND bool_and(t.audience = '') OVER batch
                        AND NOT bool_or(CASE WHEN mb.quiet_start_hour IS NULL THEN false
                                             ELSE COALESCE((SELECT lower(e.severity) = 'critical' FROM events e
                                                             WHERE e.organization_id = t.organization_id AND e.id = t.event_id
                                                               AND e.received_at = t.event_received_at), false) END) OVER batch
                   THEN notify_quiet_until(mb.zone, mb.quiet_start_hour, mb.quiet_end_hour, ${now}) END AS quiet_until
         FROM taken t
         ${MEMBERS_JOINS[join].join}
        WHERE t.status = 'delivered'
          AND (t.audience = '' OR t.audience = '@' || mb.member_id::text
               OR (t.audience = mb.zone AND t.created_at >= COALESCE(mb.zone_since, '-infinity')))
       WINDOW batch AS (PARTITION BY t.rule_id, t.period_key, mb.member_id)
     ), batches AS (
       -- A member's matches of a period are disjoint (their own ones predate their zone's), so count(*) counts events.
       SELECT rule_id, period_key, member_id, email, zone, zone_since, count(*)::int AS event_count, min(event_received_at) AS first_event_at, quiet_until
         FROM recipients
        GROUP BY rule_id, period_key, member_id, email, zone, zone_since, quiet_until
     ), held AS (
       INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, audience, created_at)
       SELECT r.rule_id, r.organization_id, r.event_id, r.event_received_at, 'q' || (extract(epoch FROM r.quiet_until) * 1000)::bigint,
              r.quiet_until, 'pending', '@' || r.member_id::text, ${now}
         FROM recipients r
        WHERE r.quiet_until IS NOT NULL
       ON CONFLICT DO NOTHING
     )`;

/** A statement's name with its members' join: the texts differ (named statements keep one text a name). */
export const joinedName = (name: string, join: MembersJoin): string => (join === 'scan' ? name : `${name}-probe`);

/**
 * The deliveries of the batches not held: RETURNING each one's id and rule. Each month of
 * deliveries has its own unique index (rule, member, period key), the arbiter of the ON CONFLICT;
 * a key delivered in an earlier month is skipped by looking (`keys: 'any'`), which a key of the
 * moment (`keys: 'fresh'`: an instant rule's first match `i<ms>`, a flush's `f<ms>`) needs not: a
 * kept plan made while the deliveries were few read them whole for it (measured in commit afeffb5).
 * Callers hold the rule's row, so no other transaction adds the same key meanwhile.
 *
 * `claimUpTo`, an SQL integer: that many of the deliveries (the first made) are made claimed for
 * their sender (`sending`, their first attempt counted, as claimDeliveries would leave them; none
 * for 0), and every one returns its status and what a claim reads of its row (CLAIMED_INSERTED):
 * the sender of this process takes those without claiming them.
 */
export const deliveriesInsert = (keys: 'any' | 'fresh', claimUpTo: string): string => `INSERT INTO deliveries (id, rule_id, team_member_id, email, period_key, event_count, first_event_at, time_zone, zone_since, status, attempts)
     SELECT gen_random_uuid(), b.rule_id, b.member_id, b.email, b.period_key, b.event_count, b.first_event_at, b.zone, b.zone_since,
            CASE WHEN row_number() OVER () <= ${claimUpTo} THEN 'sending'::delivery_status ELSE 'pending'::delivery_status END,
            CASE WHEN row_number() OVER () <= ${claimUpTo} THEN 1 ELSE 0 END
       FROM batches b
      WHERE b.quiet_until IS NULL${keys === 'fresh' ? '' : `
        AND NOT EXISTS (SELECT 1 FROM deliveries d
                         WHERE d.rule_id = b.rule_id AND d.team_member_id = b.member_id AND d.period_key = b.period_key)`}
     ON CONFLICT DO NOTHING
     RETURNING id, rule_id::text AS rule_id, status, team_member_id, email, period_key, attempts, first_event_at, time_zone, zone_since`;
