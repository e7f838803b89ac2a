import type { ClaimedDelivery, DatabaseHandle } from '@notify/db';
import type { Queues } from '@notify/queues';

/**
 * What the pipeline tells whoever watches it (metrics): a process hands one in through its
 * context; without one nothing is counted. `@notify/observability`'s `Metrics.pipeline` fits.
 */
export interface PipelineMetrics {
  /** Events stored by one ingest call of one scope, and those sent again. */
  eventsIngested(scope: string, accepted: number, duplicates: number): void;
  /** One statement stored the events of this many ingest calls (requests that came together share one). */
  ingestStatement(calls: number): void;
  /** Matches recorded for rules of a scope and frequency. */
  matched(scope: string, frequency: string, count: number): void;
  /** Matches held back by silences. */
  silenced(count: number): void;
  /** An e-mail was accepted; `latencyMs` from its first event's arrival (null when unknown). */
  mailSent(frequency: string, latencyMs: number | null): void;
  /** An attempt failed: transient (retried unless final), permanent, or cancelled (member removed). */
  mailFailed(reason: 'transient' | 'permanent' | 'unavailable' | 'cancelled' | 'suppressed', final: boolean): void;
}

/**
 * Takes deliveries this process made to send in this process, without a send job: for an instant
 * alert, a job (added, taken and finished in Redis) cost more of our CPU and of Redis than the rest
 * of its sending, and its round trips came before the e-mail.
 */
export interface SendHere {
  /**
   * Takes what it can of `deliveryIds`; returns those it declines (it is full, closing, or sending
   * is paused), for the send queue. `claimed`: those of them the statement that made them claimed
   * for it (ClaimsWhenMade), sent without a claim of their own; any it declines is the
   * caller's to give back. It never throws.
   */
  take(deliveryIds: readonly string[], claimed?: ReadonlyMap<string, ClaimedDelivery>): string[];
  /** How many deliveries it takes now (none when closing or paused): as many as a statement about to make some may make claimed for it. */
  room(): number;
}

/** What the pipeline's use cases need; processes build one and pass it in. */
export interface PipelineContext {
  /** Reached only through @notify/db's named operations. */
  db: DatabaseHandle;
  queues: Queues;
  /** The clock is a parameter, so schedules and windows are tested with fixed instants. */
  now: () => Date;
  instantCoalesceMs: number;
  metrics?: PipelineMetrics;
  /** A process with the send role sends the deliveries it makes itself (see SendHere); otherwise they go to the send queue. */
  sendHere?: SendHere;
}
