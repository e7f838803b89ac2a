import type { Transaction, UnmatchedEvent } from '@notify/db';
import type { MatchHere, MatchInStore, MatchResult } from '@notify/pipeline';
import type { Logger } from '@notify/observability';
import { InProcessWork } from './in-process-work';

/** Matching of events in the transaction that stores them (matchStoredEvents, with the pipeline's clock). */
export interface MatchStored {
  now(): Date;
  match(tx: Transaction, events: UnmatchedEvent[], now: Date): Promise<() => Promise<MatchResult>>;
}

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
export class InProcessMatching extends InProcessWork {
  private events = 0;
  /**
   * Matching in the transactions that store a batch of small requests' events (ingest's
   * MatchInStore), when given `stored`: what follows their commit (sending instant alerts) runs
   * here in the background, and `close` waits for it too.
   */
  readonly inStore: MatchInStore | undefined;

  constructor(
    private readonly match: (events: ReadonlyArray<readonly [string, string]>) => Promise<MatchResult>,
    private readonly logger: Logger,
    private readonly maxEvents = MATCH_HERE_MAX_EVENTS,
    stored?: MatchStored,
  ) {
    super();
    this.inStore = stored && {
      open: () => !this.closed,
      now: stored.now,
      match: async (tx, events, now) => {
        const finish = await stored.match(tx, events, now);
        return () => {
          const count = events.length;
          this.events += count;
          this.start(finish(), {
            done: (result) => this.logger.debug({ ...result, taken_events: count }, 'events matched as stored'),
            failed: (error) => this.logger.warn({ err: error, events: count }, 'events matched, their e-mails not handed over; the reconciler will send them'),
          }, () => {
            this.events -= count;
          });
        };
      },
      failed: (error, events) => this.logger.warn({ err: error, events }, 'events not matched as stored; stored alone, they go to matching as ever'),
    };
  }

  /** Events taken and not matched yet. */
  get pending(): number {
    return this.events;
  }

  readonly take: MatchHere = (scope, events) => {
    if (this.closed || this.events + events.length > this.maxEvents) return false;
    const count = events.length;
    this.events += count;
    this.start(this.match(events), {
      done: (result) => this.logger.debug({ ...result, scope, taken_events: count }, 'events matched in process'),
      failed: (error) => this.logger.warn({ err: error, scope, events: count }, 'events stored but not matched; the reconciler will ask for them again'),
    }, () => {
      this.events -= count;
    });
    return true;
  };
}
