import type { DatabaseHandle } from '@notify/db';
import type { Queues } from '@notify/queues';

/**
 * What the pipeline tells whoever watches it (metrics): a process hands one in with its
 * resources; without one nothing is counted. `@notify/observability`'s `Metrics.pipeline` fits.
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

/** What every stage is built with: the record, the transport, the clock and the metrics. */
export interface PipelineResources {
  /** Reached only through @notify/db's named operations. */
  db: DatabaseHandle;
  queues: Queues;
  /** The clock is a parameter, so schedules and windows are tested with fixed instants. */
  now: () => Date;
  metrics?: PipelineMetrics;
}
