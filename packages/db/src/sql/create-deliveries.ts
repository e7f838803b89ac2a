import { clientOf, named, type Transaction } from '../client';
import { CLAIMED_DELIVERY_COLUMNS, claimedAnswer, claimedEvents, MEMBERS_MATCH, periodRepeats, type ClaimedDelivery } from './claim-deliveries';

/** A delivery createDeliveries made: its id and its rule's. */
export interface CreatedDelivery {
  id: string;
  ruleId: string;
}

/**
 * A taken match's new status: delivered, or dropped for a disabled rule or one without subscribed
 * members (its rule `r`). The member is found by a probe of the rule's (a scalar subquery with a
 * LIMIT), never by an EXISTS the planner may turn into a hash of every rule's members: in a kept
 * plan made for a few rows it did, on each call of the match statement.
 */
export const TAKEN_STATUS = `CASE WHEN r.enabled AND (SELECT true FROM notification_rule_members rm WHERE rm.rule_id = r.id AND rm.unsubscribed_at IS NULL LIMIT 1)
                            THEN 'delivered'::match_status ELSE 'dropped'::match_status END`;

/**
 * The CTE `rule_status` (rule_id, status and `columns` of `from`): TAKEN_STATUS of each row of
 * `from` (which names the rule `r`), worked out once a row rather than once a match: set on each
 * match, it cost a probe of the rule's row and one of its members for every match taken (a flush
 * of 5 rules of 20 matches: 600 of its 1,559 buffer reads). MATERIALIZED: inlined, the planner
 * would work it out for each joined match again. The UPDATE of matches is driven from it, one
 * index scan a row, and joins no other CTE: joined to one as well, the planner (ten rows estimated
 * for each) scanned that one whole for each match (200 periods of 20 matches: 400 ms a call
 * instead of 200).
 */
const ruleStatus = (from: string, columns = ''): string => `rule_status AS MATERIALIZED (
       SELECT r.id AS rule_id${columns}, ${TAKEN_STATUS} AS status FROM ${from}
     )`;

/** What the statements below read of the matches they take (`taken`, an UPDATE of matches m). */
const TAKEN_COLUMNS = 'm.rule_id, m.period_key, m.organization_id, m.event_id, m.event_received_at, m.audience, m.created_at, m.status';

/**
 * How deliveriesFromTaken meets each delivered match with its rule's subscribed members:
 * - `scan`: the members of the call's rules are read once a rule (the CTE `members`), and the
 *   matches joined to those rows as the planner estimates both (one row each): a nested loop that
 *   scans the call's member rows for each match. The cheapest for a call of few rules (a flush of
 *   5 rules of 20 matches: 30% less of PostgreSQL's time than `probe`), but quadratic in the
 *   call's size.
 * - `probe`: each match's members are looked up by index (the rule's members, their rows, their
 *   organization's zone): linear. A call of the 09:00 wave, 200 periods of 5 matches, cost
 *   PostgreSQL 43 ms of CPU instead of 58 (medians of 8 alternated calls, 20,000 rules stored); a
 *   call of 5 or 20 periods the same as `scan` or less, of 50 about the same.
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
       -- member's three rows were read again for each match of its rule (a flush of 10 rules of 20
       -- matches: 4.9 ms instead of 4.4). Its kept plan, with 100,000 rules stored: the taken
       -- rules hashed, then one index probe each. Only rules with a delivered match: a disabled
       -- rule's members would reach no recipient.
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
       -- quarter of the statement's time for 200 periods of 1,000 matches.
       -- An event's row is read only for a member with quiet hours (is it critical?): a match has
       -- its event's keys and received_at, and lives and is dropped with it (its month). Looking up
       -- every match's event cost a flush of 10 rules of 20 matches 5.3 ms instead of 4.7.
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

/**
 * Deliveries a statement makes claimed for this process's sender as it makes them (`sending`, their
 * first attempt counted), answered as claimDeliveries would answer them, so that sending them costs
 * no claim statement of its own: an instant alert's claim was a second write of its delivery's row
 * (its five indexes again) and a round trip, about a sixth of PostgreSQL's CPU an event at 200
 * single-event requests a second. At most `claimUpTo`, as many as the sender has room for: it sends
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
 * The CTE `answered`: each delivery of CLAIMED_INSERTED answered (claimedInsertedRows, `repeats`
 * its count of the period's repeats; the event limit is the statement's `$5`), worked out once.
 * Joined to the deliveries made as a subquery, it was worked out again for each of them (a kept
 * plan's nested loop, one row estimated for each).
 */
const answeredClaims = (repeats: string): string => `answered AS MATERIALIZED (
       ${claimedInsertedRows(repeats, '$5::int')}
     )`;

/** A row of a statement that makes deliveries: a delivery made (its id null when it made none) and, if claimed, its claim's answer. */
type MadeRow = { delivery_id: string | null; delivery_rule_id: string | null } & ({ id: null } | ClaimedDelivery);

/** The deliveries of a statement's rows (MadeRow), and the claimed ones' answers without the statement's own columns (`own`). */
function madeDeliveries(rows: readonly MadeRow[], own: readonly string[] = []): MadeDeliveries {
  const deliveries: CreatedDelivery[] = [];
  const claimed: ClaimedDelivery[] = [];
  for (const row of rows) {
    if (row.delivery_id === null) continue;
    deliveries.push({ id: row.delivery_id, ruleId: row.delivery_rule_id! });
    if (row.id !== null) claimed.push(claimedAnswer(row, ['delivery_id', 'delivery_rule_id', ...own]));
  }
  return { deliveries, claimed };
}

/** A statement's name with its members' join: the texts differ (named statements keep one text a name). */
export const joinedName = (name: string, join: MembersJoin): string => (join === 'scan' ? name : `${name}-probe`);

/**
 * The deliveries of the batches not held: RETURNING each one's id and rule. Each month of
 * deliveries has its own unique index (rule, member, period key), the arbiter of the ON CONFLICT;
 * a key delivered in an earlier month is skipped by looking (`keys: 'any'`), which a key of the
 * moment (`keys: 'fresh'`: an instant rule's first match `i<ms>`, a flush's `f<ms>`) needs not: a
 * kept plan made while the deliveries were few read them whole for it (5 ms a call at 3,000).
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
     ), ${CLAIMED_INSERTED}, ${answeredClaims(periodRepeats('c.rule_id::uuid'))}
     SELECT i.id AS delivery_id, i.rule_id AS delivery_rule_id, y.* FROM inserted i LEFT JOIN answered y ON y.id = i.id`,
    [periods.map((p) => p.ruleId), periods.map((p) => p.periodKey), now, Math.max(0, Math.floor(claims.claimUpTo)), claims.eventLimit],
  ));
  return madeDeliveries(rows);
}

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
 * write, with every index of the match updated again, was a third of PostgreSQL's time in a flush.
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
     ), ${answeredClaims(`(SELECT count(*)::int FROM repeats m WHERE m.rule_id = c.rule_id::uuid AND ${MEMBERS_MATCH})`)}, counted AS (
       -- A rule's matches are its organization's events: their ids alone tell them apart (a record's
       -- comparison made this count 5% of the statement, 100 matches).
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
