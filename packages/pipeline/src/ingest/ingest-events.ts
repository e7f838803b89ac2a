import {
  collapseDuplicateEvents,
  eventKey,
  eventParam,
  ingestMessages,
  messages,
  ValidationFailed,
  INGEST_LIMITS,
  type FieldIssue,
  type IncomingEvent,
  type IngestShape,
  type Scope,
} from '@notify/core';
import { existingOrganizationIds, isForeignKeyViolation, storeEvents, storeEventsToMatch, withTransaction, type DatabaseHandle, type StoredEvent, type Transaction, type UnmatchedEvent } from '@notify/db';
import type { Queues } from '@notify/queues';
import { Batcher } from '../batcher';
import type { PipelineMetrics } from '../context';

export interface IngestContext {
  db: DatabaseHandle;
  queues: Pick<Queues, 'requestMatch'>;
  /**
   * How long to wait for Redis before answering anyway (default 2 s). A Redis that is down
   * can hold a command until it reconnects; the events are stored by then, so nothing waits on it.
   */
  publishTimeoutMs?: number;
  /** Told when publishing a scope's events failed or timed out (e.g. to log it); the events stay stored. */
  onPublishError?: (error: unknown, scope: Scope, events: number) => void;
  /** Counts stored and repeated events by scope. */
  metrics?: Pick<PipelineMetrics, 'eventsIngested' | 'ingestStatement'>;
  /**
   * How long a small call (under STORE_LINGER_UNTIL events) may wait for others to share its
   * statement, while calls come together (Batcher's lingerWhilePaying): INGEST_LINGER_MS. Default
   * 0, no wait.
   */
  lingerMs?: number;
  /**
   * Matching in this process, when it runs the match role too (see MatchHere): the events it takes
   * skip the match queue. It answers false when it is full or closing, and the queue takes them.
   */
  matchHere?: MatchHere;
  /**
   * Matching in the transaction that stores the events, when this process runs the match role too
   * (see MatchInStore): for batches of up to MATCH_IN_STORE_UP_TO events, the single-event
   * requests' batches. Others, and any it cannot match, go to matchHere or the queues.
   */
  matchInStore?: MatchInStore;
}

/**
 * Matches events in the transaction that stores them, before it commits (matchStoredEvents): a
 * batch of single-event requests' events is read and locked again by no match transaction, no
 * event's row is written twice (stored, then marked matched), and there is a transaction less.
 * The request is answered once they are matched (a few milliseconds more) and the statement that
 * stores them committed. Should matching fail, or wait on a lock longer than
 * MATCH_IN_STORE_LOCK_TIMEOUT_MS, the transaction rolls back, and the events are stored alone and
 * published as ever: nothing accepted is lost to a failure of matching, and no request waits long
 * on it.
 */
export interface MatchInStore {
  /** False when closing: the events are stored alone and published. */
  open(): boolean;
  /** The clock matching reads: the events are stored matched at it. */
  now(): Date;
  /**
   * Matches `events`, just stored by `tx` (storeEventsToMatch), in that transaction; throws to
   * roll them back. Answers what to start once it commits (the e-mails of instant alerts): it
   * never throws, and the request does not wait for it.
   */
  match(tx: Transaction, events: UnmatchedEvent[], now: Date): Promise<() => void>;
  /** Told when storing and matching failed (but for an unknown organization): the events are then stored alone. Never throws. */
  failed(error: unknown, events: number): void;
}

/**
 * The longest a transaction that stores and matches waits for a lock (an instant rule's row that a
 * flush or a rule's update holds, an asset's row that a sweep's batch is writing) before it gives
 * up and the events are stored alone: their requests wait no longer on matching than that.
 */
export const MATCH_IN_STORE_LOCK_TIMEOUT_MS = 200;

/** The most events of a store batch matched in its transaction (MatchInStore): a lingering batch's (STORE_LINGER_UNTIL), not a sweep's. */
export const MATCH_IN_STORE_UP_TO = 100;

/**
 * Takes stored events of one scope to match in this process, without a job: for single-event
 * requests, a match job per event and scope cost more of Redis and of our CPU than the matching.
 * True when taken; it never throws. Events it takes and does not match (a database away, the
 * process killed) stay unmatched in PostgreSQL, and the reconciler asks for them again.
 */
export type MatchHere = (scope: Scope, events: Array<[string, string]>) => boolean;

export interface IngestOptions {
  /** How the events came: names the params of errors (`organization_id` or `events[3].organization_id`). Default 'batch'. */
  shape?: IngestShape;
}

export interface IngestResult {
  /** Events stored by this call. */
  accepted: number;
  /** Events already stored before (a harmless re-send) or repeated within this batch. */
  duplicates: number;
}

export const DEFAULT_PUBLISH_TIMEOUT_MS = 2000;

/** The indices of events whose organization does not exist, found with one query. */
async function unknownOrganizations(db: DatabaseHandle, events: readonly IncomingEvent[]): Promise<number[]> {
  const known = new Set(await existingOrganizationIds(db, [...new Set(events.map((event) => event.organizationId))]));
  return events.flatMap((event, index) => (known.has(event.organizationId) ? [] : [index]));
}

function unknownOrganizationError(events: readonly IncomingEvent[], indices: readonly number[], shape: IngestShape): ValidationFailed {
  const issues: FieldIssue[] = indices.slice(0, INGEST_LIMITS.maxIssues).map((index) => ({
    param: eventParam(shape, index, 'organization_id'),
    details: [messages.unknownMember(events[index]!.organizationId)],
  }));
  if (indices.length > INGEST_LIMITS.maxIssues) issues.push({ param: 'body', details: [ingestMessages.truncated(INGEST_LIMITS.maxIssues)] });
  return new ValidationFailed(issues);
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

/**
 * Stores the events of ingest calls made at about the same moment in one statement and asks for
 * their match (Batcher, group commit): under load, concurrent single-event requests share a
 * commit and a match job per scope instead of paying one each; with `lingerMs`, small calls wait
 * that long for each other while they come together (at 200 single-event requests a second, 30 ms
 * make batches of about seven, and an event's CPU end to end falls from 4.5–5.0 ms to 1.9–2.0: issue
 * 11's record, seventeenth round). An event sent by two calls of one
 * batch counts for the first; a batch that fails (an unknown organization's foreign key) is tried
 * again call by call, so only the call at fault fails. Per context, made on first use.
 */
const storeBatches = new WeakMap<IngestContext, Batcher<readonly IncomingEvent[], StoredEvent[]>>();

/** The most events one shared statement takes (a call's own batch of up to 1,000 goes whole). */
const STORE_BATCH_EVENTS = 2000;

/**
 * A lingering store batch goes once it holds this many events: their statement's fixed costs are
 * shared enough, and a call of this many events never waits.
 */
export const STORE_LINGER_UNTIL = 50;

function storeBatcher(ctx: IngestContext): Batcher<readonly IncomingEvent[], StoredEvent[]> {
  const known = storeBatches.get(ctx);
  if (known) return known;
  const batcher = new Batcher<readonly IncomingEvent[], StoredEvent[]>(
    async (calls) => {
      const owner = new Map<string, number>();
      const all: IncomingEvent[] = [];
      calls.forEach((events, call) => {
        for (const event of events) {
          const key = eventKey(event);
          if (owner.has(key)) continue;
          owner.set(key, call);
          all.push(event);
        }
      });
      const matched = await storeAndMatch(ctx, all);
      const inserted = matched ?? (await storeEvents(ctx.db, all));
      ctx.metrics?.ingestStatement(calls.length);
      if (!matched) await publish(ctx, inserted);
      const stored: StoredEvent[][] = calls.map(() => []);
      for (const row of inserted) stored[owner.get(eventKey({ organizationId: row.organization_id, id: row.id }))!]!.push(row);
      return stored;
    },
    {
      maxBatch: STORE_BATCH_EVENTS,
      concurrency: 2,
      weight: (events) => events.length,
      lingerMs: ctx.lingerMs,
      lingerUntil: STORE_LINGER_UNTIL,
      lingerWhilePaying: true,
    },
  );
  storeBatches.set(ctx, batcher);
  return batcher;
}

/**
 * Stores events and matches them in one transaction (MatchInStore), when the context can and the
 * batch is small. Answers the events stored, or undefined when it stored none: not asked to, or
 * matching failed (MatchInStore's `failed` hears of it), and the caller stores them alone. An
 * unknown organization's foreign key fails it as it fails storeEvents.
 */
async function storeAndMatch(ctx: IngestContext, events: readonly IncomingEvent[]): Promise<StoredEvent[] | undefined> {
  const matcher = ctx.matchInStore;
  if (!matcher || events.length > MATCH_IN_STORE_UP_TO || !matcher.open()) return undefined;
  let done: { stored: UnmatchedEvent[]; committed?: () => void };
  try {
    done = await withTransaction(ctx.db, async (tx) => {
      // Read once the transaction has begun: an event is then matched no earlier than it is
      // received, to the millisecond (received_at is the database's clock at the transaction's
      // start, rounded to the millisecond), the two clocks agreeing.
      const now = matcher.now();
      const stored = await storeEventsToMatch(tx, events, now);
      // Repeats of stored events only: nothing to match.
      return { stored, committed: stored.length ? await matcher.match(tx, stored, now) : undefined };
    }, { genericPlans: true, lockTimeoutMs: MATCH_IN_STORE_LOCK_TIMEOUT_MS });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw error;
    matcher.failed(error, events.length);
    return undefined;
  }
  done.committed?.();
  return done.stored;
}

/**
 * Asks for the match of stored events, one request per scope, or hands them to matchHere. It never
 * fails: when Redis is down or slow, the events are stored with `matched_at` null and the
 * reconciler asks for them again; `onPublishError` hears about it.
 */
async function publish(ctx: IngestContext, inserted: readonly StoredEvent[]): Promise<void> {
  const byScope = new Map<Scope, Array<[string, string]>>();
  for (const row of inserted) {
    const pairs = byScope.get(row.scope);
    if (pairs) pairs.push([row.organization_id, row.id]);
    else byScope.set(row.scope, [[row.organization_id, row.id]]);
  }
  const timeoutMs = ctx.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
  await Promise.all(
    [...byScope].map(async ([scope, pairs]) => {
      if (ctx.matchHere?.(scope, pairs)) return;
      try {
        await withTimeout(ctx.queues.requestMatch(scope, pairs), timeoutMs);
      } catch (error) {
        // Stored is what the caller was promised; the reconciler publishes what stays unmatched.
        try {
          ctx.onPublishError?.(error, scope, pairs.length);
        } catch {
          // A failing listener does not undo a stored batch either.
        }
      }
    }),
  );
}

/**
 * Stores events that passed ingest validation (the HTTP route's or createEventPublisher's) and
 * asks the match stage for the new ones.
 *
 * All or nothing, and durable before anything else: every event is written by one statement
 * (storeEvents, which also records their assets) that commits on its own, shared with the calls
 * made at the same moment, or in the transaction that matches them (a small batch, with
 * `matchInStore`; should matching fail, they are stored alone); an unknown organization fails it,
 * and the call is a ValidationFailed that stored nothing. An event whose (organization_id, id) is
 * already stored is left as it is and counted in `duplicates`, as are repeats within the batch
 * (the first one counts).
 *
 * Asking for the match comes after the commit, so matching never looks for an event it cannot read
 * yet, and never fails the call (see publish).
 */
export async function ingestEvents(ctx: IngestContext, events: readonly IncomingEvent[], options: IngestOptions = {}): Promise<IngestResult> {
  if (events.length === 0) return { accepted: 0, duplicates: 0 };
  const shape = options.shape ?? 'batch';

  let inserted: StoredEvent[];
  try {
    inserted = await storeBatcher(ctx).submit(collapseDuplicateEvents(events));
  } catch (error) {
    // An unknown organization fails the insert (its foreign key), which stored nothing: only then
    // are the organizations looked up, to name the events at fault. A check before every insert
    // would cost each request a round trip for what is almost never the case.
    if (isForeignKeyViolation(error)) {
      const unknown = await unknownOrganizations(ctx.db, events);
      if (unknown.length) throw unknownOrganizationError(events, unknown, shape);
    }
    throw error;
  }

  if (ctx.metrics) {
    const accepted = new Map<Scope, number>();
    for (const row of inserted) accepted.set(row.scope, (accepted.get(row.scope) ?? 0) + 1);
    const received = new Map<Scope, number>();
    for (const event of events) received.set(event.scope, (received.get(event.scope) ?? 0) + 1);
    for (const [scope, count] of received) ctx.metrics.eventsIngested(scope, accepted.get(scope) ?? 0, count - (accepted.get(scope) ?? 0));
  }
  return { accepted: inserted.length, duplicates: events.length - inserted.length };
}
