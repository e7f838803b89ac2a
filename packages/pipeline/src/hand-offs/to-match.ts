import type { Scope } from '@notify/core';
import type { Logger } from '@notify/observability';
import type { Queues } from '@notify/queues';
import type { MatchInStore } from '../ingest/ingest-stage';
import type { MatchStage } from '../match/match-stage';
import { InProcessWork } from './in-process-work';

/**
 * The hand-off from ingest to the match stage: the events just stored, one call per scope, go to
 * this process's match stage when it has one and room (the matchInProcess fast path), otherwise to
 * the scope's match queue. It never fails: when Redis is down or slow, the events stay stored with
 * `matched_at` null and the reconciler asks for them again.
 */
export interface ToMatch {
  hand(scope: Scope, events: Array<[string, string]>): Promise<void>;
}

export const DEFAULT_PUBLISH_TIMEOUT_MS = 2000;

export interface MatchQueueOptions {
  /**
   * How long to wait for Redis before answering anyway (default 2 s). A Redis that is down
   * can hold a command until it reconnects; the events are stored by then, so nothing waits on it.
   */
  publishTimeoutMs?: number;
  /** Told when publishing a scope's events failed or timed out (e.g. to log it); the events stay stored. */
  onPublishError?: (error: unknown, scope: Scope, events: number) => void;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`publishing did not finish within ${ms} ms`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every scope's events to its match queue. */
export function matchQueue(resources: { queues: Pick<Queues, 'requestMatch'> }, options: MatchQueueOptions = {}): ToMatch {
  const timeoutMs = options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
  return {
    async hand(scope, events) {
      try {
        await withTimeout(resources.queues.requestMatch(scope, events), timeoutMs);
      } catch (error) {
        // Stored is what the caller was promised; the reconciler publishes what stays unmatched.
        try {
          options.onPublishError?.(error, scope, events.length);
        } catch {
          // A failing listener does not undo a stored batch either.
        }
      }
    },
  };
}

/** The most events waiting or being matched here at once; past it, ingest publishes to the match queues. */
export const MATCH_HERE_MAX_EVENTS = 2000;

export interface MatchInProcessOptions {
  /** The matchInStore fast path: small batches are matched in the transaction that stores them (`inStore`). */
  matchInStore: boolean;
  log: Logger;
  maxEvents?: number;
}

/**
 * The matchInProcess fast path: the events this process ingests go to the transactions the match
 * jobs share (MatchStage.match) without a job of their own, which for single-event requests cost
 * more (a job's round trips to Redis, per event and scope) than the matching itself. Bounded: past
 * MATCH_HERE_MAX_EVENTS in flight, or once closing, it declines and `queue` takes them, where a
 * flood of one scope does not hold up the others. Nothing is lost by taking events here: they are
 * stored before, and any this process does not match (the database away, the process killed) stay
 * unmatched in PostgreSQL, where the reconciler finds them after its grace and asks for them again.
 */
export class MatchInProcess extends InProcessWork implements ToMatch {
  private events = 0;
  private readonly maxEvents: number;
  /**
   * The matchInStore fast path, when on: matching in the transactions that store a batch of small
   * requests' events; what follows their commit (sending instant alerts) runs here in the
   * background, and `close` waits for it too.
   */
  readonly inStore: MatchInStore | undefined;

  constructor(
    private readonly stage: MatchStage,
    private readonly queue: ToMatch,
    private readonly options: MatchInProcessOptions,
  ) {
    super();
    this.maxEvents = options.maxEvents ?? MATCH_HERE_MAX_EVENTS;
    const { log } = options;
    this.inStore = options.matchInStore
      ? {
          open: () => !this.closed,
          now: () => stage.now(),
          match: async (tx, events, now) => {
            const finish = await stage.matchStored(tx, events, now);
            return () => {
              const count = events.length;
              this.events += count;
              this.start(finish(), {
                done: (result) => log.debug({ ...result, taken_events: count }, 'events matched as stored'),
                failed: (error) => log.warn({ err: error, events: count }, 'events matched, their e-mails not handed over; the reconciler will send them'),
              }, () => {
                this.events -= count;
              });
            };
          },
          failed: (error, events) => log.warn({ err: error, events }, 'events not matched as stored; stored alone, they go to matching as ever'),
        }
      : undefined;
  }

  /** Events taken and not matched yet. */
  get pending(): number {
    return this.events;
  }

  async hand(scope: Scope, events: Array<[string, string]>): Promise<void> {
    if (this.closed || this.events + events.length > this.maxEvents) return this.queue.hand(scope, events);
    const count = events.length;
    this.events += count;
    const { log } = this.options;
    this.start(this.stage.match(events), {
      done: (result) => log.debug({ ...result, scope, taken_events: count }, 'events matched in process'),
      failed: (error) => log.warn({ err: error, scope, events: count }, 'events stored but not matched; the reconciler will ask for them again'),
    }, () => {
      this.events -= count;
    });
  }
}
