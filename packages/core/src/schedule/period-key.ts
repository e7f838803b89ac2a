import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';

/**
 * Every kind of period key, made here and nowhere else.
 *
 * A period key names the batch of a rule's matches that goes out as one e-mail per member: a
 * delivery is unique per (rule, member, period key), and the deliver job of a period has the id
 * `deliver.<rule>.<period key>`. So a key must be the same in every process for the same period,
 * differ between batches that must not merge, and hold no `.`/`:` (job id separators).
 *
 * | kind       | shape                  | made when                                                    |
 * |------------|------------------------|--------------------------------------------------------------|
 * | digest     | `20261122T140000Z`     | a digest rule's match: the basic ISO 8601 UTC instant its period (in a member's zone) is due |
 * | instant    | `i<epoch ms>`          | an instant rule's first match after a quiet spell: sent at once |
 * | burst      | `b<epoch ms>`          | an instant rule's matches during its coalescing window: sent when the window ends (the ms) |
 * | flush      | `f<epoch ms>`          | an operator flushes a rule: its pending matches, whatever their period, go now |
 * | test       | `t<epoch ms>-<8 hex>`  | a customer asks for a test send: one e-mail per member, never a period of matches |
 * | quiet      | `q<epoch ms>`          | an instant or hourly batch held through a member's quiet hours, until they end (made in SQL by createDeliveries) |
 * | late round | `<key>~<8 hex digits>` | matches that reach a period already delivered: a batch of their own |
 * | silenced   | `s`                    | a match a silence held back: never delivered, so it belongs to no batch |
 * | repeat     | `r`                    | an instant rule's match of a finding it took as news lately: never delivered |
 *
 * Keys sort by kind, then time; nothing parses them back.
 */
// Basic ISO 8601 in UTC: sortable, the same in every process, free of ':' and '-'.
const DIGEST_KEY_FORMAT = "yyyyLLdd'T'HHmmss'Z'";

export const periodKeys = {
  /** A digest period, by the instant it is due. */
  digest: (dueAt: number): string => DateTime.fromMillis(dueAt, { zone: 'utc' }).toFormat(DIGEST_KEY_FORMAT),
  /** An instant rule's first match after a quiet spell, matched at `at`. */
  instant: (at: Date): string => `i${at.getTime()}`,
  /** An instant rule's burst, sent when its coalescing window ends at `until`. */
  burst: (until: Date): string => `b${until.getTime()}`,
  /** A test send at `at`; random too, so two within one clock tick stay apart. */
  test: (at: Date): string => `t${at.getTime()}-${randomBytes(4).toString('hex')}`,
  /** An operator's flush at `at`. */
  flush: (at: Date): string => `f${at.getTime()}`,
  /**
   * A later round of a period already delivered under `key`. Random, not clock-based: two late
   * rounds within one clock tick must not share a key.
   */
  lateRound: (key: string): string => `${key}~${randomBytes(4).toString('hex')}`,
  /** A match a silence held back (status silenced): no batch ever delivers it. */
  silenced: (): string => 's',
  /** An instant rule's repeat of a recent finding (a digest rule's repeats keep their period, whose e-mail counts them). */
  repeat: (): string => 'r',
};
