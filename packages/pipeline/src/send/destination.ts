import type { ClaimedDelivery } from '@notify/db';

/**
 * How a failed attempt counts: `unsent`, nothing left us (the message could not be made) and the
 * next try may claim it at once; `unavailable`, the destination could not be reached at all, not
 * the message's failure (it waits, its attempt uncounted, and sending pauses); `permanent`, refused
 * for good; `transient`, tried again with backoff (`bounce`, on either: the recipient's address
 * itself is refused, and its later messages are suppressed).
 */
export type FailureKind = { kind: 'unsent' } | { kind: 'unavailable' } | { kind: 'permanent' | 'transient'; bounce?: string };

/**
 * The send stage's port: a claimed delivery becomes a message for a destination (an e-mail over
 * SMTP or into the outbox folder today). The stage claims, records and retries; a destination only
 * makes and hands over the message and says how its failures count.
 */
export interface Destination {
  /** What readiness calls it (`smtp`, `outbox`). */
  readonly kind: string;
  /** The id the receiving side knows the message by: the delivery's own, the same on every attempt. */
  messageIdOf(delivery: ClaimedDelivery): string;
  /**
   * Makes the delivery's message and hands it over: settles once the destination has it. Not
   * async in an implementation that holds a large message, so no suspended frame keeps it alive
   * until the record is written.
   */
  start(delivery: ClaimedDelivery, messageId: string): Promise<unknown>;
  classify(error: unknown): FailureKind;
  /** Whether the destination can be reached now (readiness). */
  verify(): Promise<unknown>;
  close(): Promise<void>;
}
