import type { MatchHere, MatchResult } from '@notify/pipeline';
import type { Logger } from '@notify/observability';

/** The most events waiting or being matched here at once; past it, ingest publishes to the match queues. */
export const MATCH_HERE_MAX_EVENTS = 2000;

/**
 * Matching of the events this process ingests, when it runs the match role too: they go to the
 * transactions match jobs share (the match processor's batcher) without a job of their own, which
 * for single-event requests cost more (a job's three or four round trips to Redis, per event and
 * scope) than the matching itself. Bounded: past MATCH_HERE_MAX_EVENTS in flight, or once closing,
 * it declines and ingest publishes to the queues as before, where a flood of one scope does not
 * hold up the others. Nothing is lost by taking events here: they are stored before, and any this
 * process does not match (the database away, the process killed) stay unmatched in PostgreSQL,
 * where the reconciler finds them after its grace and asks for them again.
 */
export class InProcessMatching {
  private events = 0;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly match: (events: ReadonlyArray<readonly [string, string]>) => Promise<MatchResult>,
    private readonly logger: Logger,
    private readonly maxEvents = MATCH_HERE_MAX_EVENTS,
  ) {}

  /** Events taken and not matched yet. */
  get pending(): number {
    return this.events;
  }

  readonly take: MatchHere = (scope, events) => {
    if (this.closed || this.events + events.length > this.maxEvents) return false;
    const count = events.length;
    this.events += count;
    const done: Promise<void> = this.match(events)
      .then(
        (result) => this.logger.debug({ ...result, scope, taken_events: count }, 'events matched in process'),
        (error: unknown) => this.logger.warn({ err: error, scope, events: count }, 'events stored but not matched; the reconciler will ask for them again'),
      )
      .finally(() => {
        this.events -= count;
        this.inFlight.delete(done);
      });
    this.inFlight.add(done);
    return true;
  };

  /** Takes no more events and waits for those taken to be matched (or to fail). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.inFlight);
  }
}
