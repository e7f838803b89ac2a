import type { DatabaseHandle } from '@notify/db';
import type { Queues } from '@notify/queues';

/**
 * What the pipeline tells whoever watches it (metrics): a process hands one in through its
 * context; without one nothing is counted. `@notify/observability`'s `Metrics.pipeline` fits.
 */
export interface PipelineMetrics {
  /** Events stored by one ingest call of one scope, and those sent again. */
  eventsIngested(scope: string, accepted: number, duplicates: number): void;
  /** Matches recorded for rules of a scope and frequency. */
  matched(scope: string, frequency: string, count: number): void;
  /** Matches held back by silences. */
  silenced(count: number): void;
  /** An e-mail was accepted; `latencyMs` from its first event's arrival (null when unknown). */
  mailSent(frequency: string, latencyMs: number | null): void;
  /** An attempt failed: transient (retried unless final), permanent, or cancelled (member removed). */
  mailFailed(reason: 'transient' | 'permanent' | 'unavailable' | 'cancelled' | 'suppressed', final: boolean): void;
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
}
