/**
 * includes/claimed-delivery — what a claim answers of a delivery: the columns of a ClaimedDelivery
 * and the pieces that read its period's matches and events.
 *
 * Takes:
 *   c       a claimed delivery's row: id, rule_id, team_member_id, email, period_key, attempts,
 *           first_event_at, time_zone, zone_since, test_event, and of its rule and organization
 *           rule_name, scope, frequency, organization_name, timezone (claim-deliveries' CTE
 *           `claimed`, includes/claim-made-deliveries' CTE `claimed`)
 *   t       its member: team_members LEFT JOINed on c.team_member_id (null once removed)
 *   m       a match with audience and created_at (MEMBERS_MATCH, periodRepeats), and its event's
 *           keys organization_id, event_id, event_received_at (claimedEvents)
 * Returns:
 *   CLAIMED_DELIVERY_COLUMNS  a ClaimedDelivery's columns but events, events_shown, event_ids, repeats
 *   claimedEvents(…)          a one-row SELECT of events, event_ids, events_shown (LATERAL-joined to c)
 *   periodRepeats(…)          a scalar subquery (int): the period's repeats that are c's member's
 *   MEMBERS_MATCH             a condition on m and c: the match is c's member's
 *   claimedAnswer             (TypeScript) a ClaimedDelivery from a row, without a statement's own columns
 * Used by: claim-deliveries, includes/claim-made-deliveries.
 */
import type { EventRecord, Frequency, Scope } from '@notify/core';
import { MAIL_EVENT_COLUMNS } from './event-json';
/** A stored event as PostgreSQL's JSON of a row of EVENT_COLUMNS gives it (core's EventRecord): the time as text. */
export type DeliveryEvent = Omit<EventRecord, 'organization_id' | 'occurred_at' | 'fingerprint'> & { occurred_at: string };

/** A delivery claimed for sending, with what its e-mail needs. */
export interface ClaimedDelivery {
  id: string;
  rule_id: string;
  team_member_id: string | null;
  email: string;
  period_key: string;
  attempts: number;
  first_event_at: Date | null;
  rule_name: string;
  scope: Scope;
  frequency: Frequency;
  organization_name: string;
  /** The member's time zone when the delivery was made (theirs, or the organization's): the e-mail's times are in it. */
  timezone: string;
  member_name: string | null;
  /** The member's address bounces: the delivery is suppressed, not sent. */
  bouncing: boolean;
  /**
   * The period's events (the newest `eventLimit`), read in the claiming statement, as JSON text: an
   * array of core's EventDetails, each time as epoch milliseconds (MAIL_EVENT_COLUMNS; a test
   * send's as text). Left unparsed, as the composer takes it (ComposeRequest.events): parsed in the
   * event loop and copied to a compose thread object by object, a digest's events cost the event
   * loop time of their own (measured in commit 95e1c0b).
   */
  events: string;
  /** How many events `events` holds. */
  events_shown: number;
  /** The ids of `events`, as a JSON array in their order; null for a test send. */
  event_ids: string | null;
  /** The period's repeats (matches of findings the rule took as news lately), left out of the e-mail. */
  repeats: number;
  /** A test send: `events` is its one event, and no period of matches is involved. */
  test: boolean;
}

/**
 * A match `m` of the claimed delivery's period that is its member's (as createDeliveries chose
 * them): for every member, of their time zone since they came into it, or their own.
 */
export const MEMBERS_MATCH = `(m.audience = '' OR m.audience = '@' || c.team_member_id::text
  OR (m.audience = c.time_zone AND m.created_at >= COALESCE(c.zone_since, '-infinity')))`;

/** How many repeats the period of a delivery `c` (its rule `ruleId`, SQL) has that are its member's: the e-mail counts them. */
export const periodRepeats = (ruleId: string): string =>
  `(SELECT count(*)::int FROM matches m WHERE m.rule_id = ${ruleId} AND m.period_key = c.period_key AND m.status::text = 'repeat' AND ${MEMBERS_MATCH})`;

/**
 * A claimed delivery as a claim answers it, from a row of a statement that made it claimed, without
 * that statement's own columns (`own`), which no claim has: the match statement's answer strings
 * rode on each of its claimed deliveries until the e-mail was sent. Copied column by column, not
 * deleted from a copy, which would leave V8 a dictionary to read for each e-mail.
 */
export function claimedAnswer(row: ClaimedDelivery, own: readonly string[]): ClaimedDelivery {
  const answer: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) if (!own.includes(column)) answer[column] = value;
  return answer as unknown as ClaimedDelivery;
}

/**
 * What a claim answers of a delivery `c` and its member `t` (LEFT JOINed team_members: null once
 * removed), besides its events and repeats: `c` is the delivery's row with its rule's name
 * (`rule_name`), scope and frequency, its organization's name (`organization_name`) and zone
 * (`timezone`), and its test event (`test_event`, null but for a test send). Also read by the
 * statement that makes instant alerts claimed for this process's sender (recordMatches).
 */
export const CLAIMED_DELIVERY_COLUMNS = `c.id, c.rule_id, c.team_member_id, c.email, c.period_key, c.attempts, c.first_event_at, c.rule_name, c.scope, c.frequency,
            c.organization_name, COALESCE(c.time_zone, t.timezone, c.timezone) AS timezone, t.name AS member_name, COALESCE(t.bouncing_since IS NOT NULL, false) AS bouncing,
            c.test_event IS NOT NULL AS test`;

/**
 * A claimed delivery's events as a claim answers them (`events`, `event_ids`, `events_shown`): its
 * matches `m` (of `from`, which has each event's keys, filtered by `where`) joined to their events,
 * newest first, named as MAIL_EVENT_COLUMNS names them; at most `limit` (SQL) when given.
 */
export const claimedEvents = (from: string, where: string, limit?: string): string => `SELECT json_agg(e ORDER BY e."occurredAt" DESC, e.id)::text AS events, json_agg(e.id ORDER BY e."occurredAt" DESC, e.id)::text AS event_ids,
                count(*)::int AS events_shown
           FROM (SELECT ${MAIL_EVENT_COLUMNS} FROM ${from} m JOIN events e ON e.organization_id = m.organization_id AND e.id = m.event_id AND e.received_at = m.event_received_at
                  WHERE ${where}${limit ? `
                  ORDER BY e.occurred_at DESC, e.id
                  LIMIT ${limit}` : ''}) e`;
