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
import { Batcher } from '../batcher';
import type { PipelineResources } from '../resources';
import type { ToMatch } from '../hand-offs/to-match';

/**
 * The matchInStore fast path, as ingest sees it (MatchInProcess.inStore makes one): matches events
 * in the transaction that stores them, before it commits (MatchStage.matchStored): a
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

/** The most events one shared statement takes (a call's own batch of up to 1,000 goes whole). */
const STORE_BATCH_EVENTS = 2000;

/**
 * A lingering store batch goes once it holds this many events: their statement's fixed costs are
 * shared enough, and a call of this many events never waits.
 */
export const STORE_LINGER_UNTIL = 50;

export interface IngestStageOptions {
  /** Where the events stored go to be matched. */
  toMatch: ToMatch;
  /** The matchInStore fast path, when this process matches too and it is on. */
  matchInStore?: MatchInStore;
  /**
   * How long a small call (under STORE_LINGER_UNTIL events) may wait for others to share its
   * statement, while calls come together (Batcher's lingerWhilePaying): INGEST_LINGER_MS. Default
   * 0, no wait.
   */
  lingerMs?: number;
}

/**
 * The ingest stage: stores events that passed ingest validation (the HTTP route's or
 * createEventPublisher's) and hands the new ones to the match stage. It owns the statement its
 * callers share: the events of ingest calls made at about the same moment are stored in one
 * statement (Batcher, group commit), so under load concurrent single-event requests share a commit
 * and a match hand-off per scope instead of paying one each; with `lingerMs`, small calls wait that
 * long for each other while they come together, which trades a few milliseconds of a request for a
 * large part of an event's CPU. An event sent by two calls of one batch counts for the first; a
 * batch that fails (an unknown organization's foreign key) is tried again call by call, so only the
 * call at fault fails.
 */
export class IngestStage {
  private readonly batches: Batcher<readonly IncomingEvent[], StoredEvent[]>;

  constructor(
    private readonly resources: Pick<PipelineResources, 'db' | 'metrics'>,
    private readonly options: IngestStageOptions,
  ) {
    this.batches = new Batcher<readonly IncomingEvent[], StoredEvent[]>(
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
        const matched = await this.storeAndMatch(all);
        const inserted = matched ?? (await storeEvents(resources.db, all));
        resources.metrics?.ingestStatement(calls.length);
        if (!matched) await this.handToMatch(inserted);
        const stored: StoredEvent[][] = calls.map(() => []);
        for (const row of inserted) stored[owner.get(eventKey({ organizationId: row.organization_id, id: row.id }))!]!.push(row);
        return stored;
      },
      {
        maxBatch: STORE_BATCH_EVENTS,
        concurrency: 2,
        weight: (events) => events.length,
        lingerMs: options.lingerMs,
        lingerUntil: STORE_LINGER_UNTIL,
        lingerWhilePaying: true,
      },
    );
  }

  /**
   * Stores events and hands the new ones to matching.
   *
   * All or nothing, and durable before anything else: every event is written by one statement
   * (storeEvents, which also records their assets) that commits on its own, shared with the calls
   * made at the same moment, or in the transaction that matches them (a small batch, with
   * `matchInStore`; should matching fail, they are stored alone); an unknown organization fails it,
   * and the call is a ValidationFailed that stored nothing. An event whose (organization_id, id) is
   * already stored is left as it is and counted in `duplicates`, as are repeats within the batch
   * (the first one counts).
   *
   * The hand-off to matching comes after the commit, so matching never looks for an event it cannot
   * read yet, and never fails the call (ToMatch).
   */
  async ingest(events: readonly IncomingEvent[], options: IngestOptions = {}): Promise<IngestResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0 };
    const shape = options.shape ?? 'batch';
    const { db, metrics } = this.resources;

    let inserted: StoredEvent[];
    try {
      inserted = await this.batches.submit(collapseDuplicateEvents(events));
    } catch (error) {
      // An unknown organization fails the insert (its foreign key), which stored nothing: only then
      // are the organizations looked up, to name the events at fault. A check before every insert
      // would cost each request a round trip for what is almost never the case.
      if (isForeignKeyViolation(error)) {
        const unknown = await unknownOrganizations(db, events);
        if (unknown.length) throw unknownOrganizationError(events, unknown, shape);
      }
      throw error;
    }

    if (metrics) {
      const accepted = new Map<Scope, number>();
      for (const row of inserted) accepted.set(row.scope, (accepted.get(row.scope) ?? 0) + 1);
      const received = new Map<Scope, number>();
      for (const event of events) received.set(event.scope, (received.get(event.scope) ?? 0) + 1);
      for (const [scope, count] of received) metrics.eventsIngested(scope, accepted.get(scope) ?? 0, count - (accepted.get(scope) ?? 0));
    }
    return { accepted: inserted.length, duplicates: events.length - inserted.length };
  }

  /**
   * Stores events and matches them in one transaction (MatchInStore), when it may and the batch is
   * small. Answers the events stored, or undefined when it stored none: not asked to, or matching
   * failed (MatchInStore's `failed` hears of it), and the caller stores them alone. An unknown
   * organization's foreign key fails it as it fails storeEvents.
   */
  private async storeAndMatch(events: readonly IncomingEvent[]): Promise<StoredEvent[] | undefined> {
    const matcher = this.options.matchInStore;
    if (!matcher || events.length > MATCH_IN_STORE_UP_TO || !matcher.open()) return undefined;
    let done: { stored: UnmatchedEvent[]; committed?: () => void };
    try {
      done = await withTransaction(this.resources.db, async (tx) => {
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

  /** Hands stored events to matching, one hand-off per scope. */
  private async handToMatch(inserted: readonly StoredEvent[]): Promise<void> {
    const byScope = new Map<Scope, Array<[string, string]>>();
    for (const row of inserted) {
      const pairs = byScope.get(row.scope);
      if (pairs) pairs.push([row.organization_id, row.id]);
      else byScope.set(row.scope, [[row.organization_id, row.id]]);
    }
    await Promise.all([...byScope].map(([scope, pairs]) => this.options.toMatch.hand(scope, pairs)));
  }
}
