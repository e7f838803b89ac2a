import type { Database } from '@notify/db';
import type { Queues } from '@notify/queues';

/** What the pipeline's use cases need; processes build one and pass it in. */
export interface PipelineContext {
  db: Database;
  queues: Queues;
  /** The clock is a parameter, so schedules and windows are tested with fixed instants. */
  now: () => Date;
  instantCoalesceMs: number;
}
