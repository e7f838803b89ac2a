/**
 * record-matches-deliver-and-claim-first — recordMatches, one statement of four stages' work:
 * 1. match:   records the matches found (a (rule, event, audience) recorded before is left as it is)
 *             and marks their events matched;
 * 2. deliver: takes the matches to deliver now (an instant rule's first, under a fresh period key),
 *             recorded delivered or dropped, and makes their deliveries (quiet hours held back);
 * 3. claim:   makes the first of those deliveries claimed for this process's sender;
 * 4. answer:  a character a match (recorded or not), the deliveries' ids, and each claimed
 *             delivery as claimDeliveries answers one.
 *
 * Parameters (arrays of one match each, $1–$9 and $14; of one event each, $11–$13):
 *   $1 uuid[] rule_id       $2 uuid[] organization_id   $3 text[] event_id      $4 timestamptz[] event_received_at
 *   $5 text[] period_key    $6 timestamptz[] due_at     $7 match_status[] status $8 uuid[] silence_id
 *   $9 text[] audience      $14 boolean[] deliver_now
 *   $10 timestamptz         now: the matches' created_at, the events' matched_at, the deliveries' moment
 *   $11 uuid[] $12 text[] $13 timestamptz[]   the events to mark matched: organization_id, id, received_at
 *   $15 int                 how many deliveries to make claimed (ClaimsWhenMade.claimUpTo)
 *   $16 int                 the newest events answered per claimed delivery (ClaimsWhenMade.eventLimit)
 * CTEs, in order:
 *   n                                        the matches given, numbered (i)
 *   recorded                                 the INSERT of matches; a match delivered now gets TAKEN_STATUS (includes/rule-status)
 *   marked                                   the UPDATE of the events
 *   taken                                    the recorded matches delivered or dropped now (TAKEN_COLUMNS)
 *   [members,] recipients, batches, held     includes/deliveries-from-matches, from taken
 *   inserted                                 deliveriesInsert('fresh', $15)
 *   claimed                                  includes/claim-made-deliveries
 *   answer                                   recorded (a '1' or '0' a match, in order), deliveries (ids, comma-separated)
 * Returns: answer's two columns on every row, with a claimed delivery each (claimedInsertedRows,
 *   no repeats: the period is fresh), or one row without (id null).
 * Prepared as `record-matches` (`record-matches-probe` with the probe join).
 */
import { clientOf, named, plainArray, rowAnswers, type Transaction } from '../client';
import { claimedAnswer, type ClaimedDelivery } from './includes/claimed-delivery';
import { CLAIMED_INSERTED, claimedInsertedRows, NO_CLAIMS, type ClaimsWhenMade } from './includes/claim-made-deliveries';
import { deliveriesFromTaken, deliveriesInsert, joinedName, membersJoinFor } from './includes/deliveries-from-matches';
import { TAKEN_STATUS } from './includes/rule-status';

export interface NewMatch {
  ruleId: string;
  organizationId: string;
  eventId: string;
  /** The event's received_at (or PostgreSQL's text of it): a match is stored in its event's month. */
  eventReceivedAt: Date | string;
  periodKey: string;
  dueAt: Date;
  /** Default pending; silenced: held back by `silenceId`; repeat: a finding the rule took as news lately. Neither is delivered. */
  status?: 'pending' | 'silenced' | 'repeat';
  silenceId?: string;
  /** Whom it is for: '' (default) every member of the rule; a time zone: a digest rule's members in it. */
  audience?: string;
  /**
   * An instant rule's first match, under a period key of its own (fresh: no other match has it):
   * delivered by the statement that records it, as createDeliveries would deliver its period.
   * Pending otherwise.
   */
  deliverNow?: boolean;
}

/** What recordMatches did: the matches it recorded (as given, status filled in) and the ids of the deliveries of those to deliver now. */
export interface RecordedMatches {
  matches: NewMatch[];
  deliveryIds: string[];
  /** The deliveries of deliveryIds made claimed (ClaimsWhenMade), as claimDeliveries would answer them. */
  claimed: ClaimedDelivery[];
}

/** A row of recordMatches' statement: its answer (on every row), and one claimed delivery, if any (its id null otherwise). */
type RecordRow = { recorded: string | null; deliveries: string | null } & ({ id: null } | ClaimedDelivery);

/**
 * Records the matches found for `events` and marks those events matched at `now` (so neither a
 * retried job nor the reconciler matches them again), in one statement for any number. Matches are
 * pending unless they say otherwise (silenced, repeat), made at `now`; a (rule, event, audience)
 * recorded before is left as it is. A match to deliver now (`deliverNow`) is written delivered
 * (or dropped, for a disabled rule or one without subscribed members) and its deliveries made in
 * the same statement (createDeliveries' CTEs, quiet hours included): no second statement takes it
 * from pending, and its row is written once. The caller holds those matches' rules' rows. Returns
 * the matches this call recorded (those given, status filled in: `pending` for one delivered now,
 * as asked) and the ids of the deliveries made, with those of them made claimed (`claims`).
 */
export async function recordMatches(
  tx: Transaction,
  events: ReadonlyArray<{ organization_id: string; id: string; received_at: Date | string }>,
  matches: readonly NewMatch[],
  now: Date,
  claims: ClaimsWhenMade = NO_CLAIMS,
): Promise<RecordedMatches> {
  if (!matches.length && !events.length) return { matches: [], deliveryIds: [], claimed: [] };
  // Each match delivered now is an instant rule's first: a period of its own.
  const join = membersJoinFor(matches.reduce((n, match) => n + (match.deliverNow ? 1 : 0), 0));
  // Answers a character a match (rowAnswers): the rows back, two timestamps each, cost the matcher
  // more than the insert cost PostgreSQL. Marking the events rides in the same statement: one
  // round trip less a transaction. received_at (the partition key) lets each event's lookup skip
  // the other months. The deliveries' CTEs find their rows by keys from `taken`, so the kept
  // plan of the match transaction serves them.
  const { rows } = await clientOf(tx).query<RecordRow>(named(joinedName('record-matches', join),
    `WITH n AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[], $7::match_status[], $8::uuid[], $9::text[], $14::boolean[])
         WITH ORDINALITY AS n(rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, silence_id, audience, deliver_now, i)
     ), recorded AS (
       INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, silence_id, audience, created_at)
       SELECT n.rule_id, n.organization_id, n.event_id, n.event_received_at, n.period_key, n.due_at,
              -- Looked up for a match delivered now only (a CASE runs its subquery for the rows
              -- that reach it); a rule gone meanwhile drops it.
              CASE WHEN n.deliver_now THEN COALESCE((SELECT ${TAKEN_STATUS} FROM notification_rules r WHERE r.id = n.rule_id), 'dropped') ELSE n.status END,
              n.silence_id, n.audience, $10::timestamptz
         FROM n
       ON CONFLICT (rule_id, organization_id, event_id, event_received_at, audience) DO NOTHING
       RETURNING rule_id, organization_id, event_id, event_received_at, audience, period_key, created_at, status
     ), marked AS (
       UPDATE events e SET matched_at = $10::timestamptz
         FROM unnest($11::uuid[], $12::text[], $13::timestamptz[]) AS p(organization_id, id, received_at)
        WHERE e.organization_id = p.organization_id AND e.id = p.id AND e.received_at = p.received_at
     ), taken AS (
       -- Only a match delivered now is recorded delivered or dropped.
       SELECT rule_id, period_key, organization_id, event_id, event_received_at, audience, created_at, status
         FROM recorded WHERE status::text IN ('delivered', 'dropped')
     ), ${deliveriesFromTaken('$10::timestamptz', join)}, inserted AS (
     ${deliveriesInsert('fresh', '$15::int')}
     ), ${CLAIMED_INSERTED}, answer AS (
       SELECT string_agg(CASE WHEN r.rule_id IS NULL THEN '0' ELSE '1' END, '' ORDER BY n.i) AS recorded,
              (SELECT string_agg(id::text, ',') FROM inserted) AS deliveries
         FROM n LEFT JOIN recorded r
           ON r.rule_id = n.rule_id AND r.organization_id = n.organization_id AND r.event_id = n.event_id
          AND r.event_received_at = n.event_received_at AND r.audience = n.audience
     )
     -- The answer on every row, with a claimed delivery each (as claimDeliveries reads one), or one
     -- row without. A fresh instant period has no repeats.
     SELECT a.recorded, a.deliveries, x.*
       FROM answer a LEFT JOIN LATERAL (
         ${claimedInsertedRows('0', '$16::int')}
       ) x ON true`,
    [
      plainArray(matches.map((m) => m.ruleId)),
      plainArray(matches.map((m) => m.organizationId)),
      matches.map((m) => m.eventId),
      matches.map((m) => m.eventReceivedAt),
      matches.map((m) => m.periodKey),
      matches.map((m) => m.dueAt),
      plainArray(matches.map((m) => m.status ?? 'pending')),
      plainArray(matches.map((m) => m.silenceId ?? null)),
      matches.map((m) => m.audience ?? ''),
      now,
      plainArray(events.map((event) => event.organization_id)),
      events.map((event) => event.id),
      events.map((event) => event.received_at),
      plainArray(matches.map((m) => (m.deliverNow ? 't' : 'f'))),
      Math.max(0, Math.floor(claims.claimUpTo)),
      claims.eventLimit,
    ],
  ));
  const taken = rowAnswers(rows[0]?.recorded, matches.length, 'recordMatches');
  const recorded: NewMatch[] = [];
  matches.forEach((match, i) => {
    if (taken[i]) recorded.push(match.status ? match : { ...match, status: 'pending' });
  });
  const deliveryIds = rows[0]?.deliveries ? rows[0].deliveries.split(',') : [];
  const claimed = rows.flatMap((row) => (row.id === null ? [] : [claimedAnswer(row, ['recorded', 'deliveries'])]));
  return { matches: recorded, deliveryIds, claimed };
}
