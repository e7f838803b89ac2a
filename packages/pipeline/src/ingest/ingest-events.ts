import {
  collapseDuplicateEvents,
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
import { existingOrganizationIds, isForeignKeyViolation, storeEvents, type DatabaseHandle, type StoredEvent } from '@notify/db';
import type { Queues } from '@notify/queues';
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
  metrics?: Pick<PipelineMetrics, 'eventsIngested'>;
}

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
 * Stores events that passed ingest validation (the HTTP route's or createEventPublisher's) and
 * asks the match stage for the new ones.
 *
 * All or nothing, and durable before anything else: every event is written by one statement
 * (storeEvents, which also records their assets) that commits on its own; an unknown
 * organization fails it, and the call is a ValidationFailed that stored nothing. An event whose
 * (organization_id, id) is already stored is left as it is and counted in `duplicates`, as are
 * repeats within the batch (the first one counts).
 *
 * Asking for the match comes after the commit, so matching never looks for an event it cannot read yet.
 * It never fails the call: when Redis is down or slow, the events are stored with
 * `matched_at` null and the reconciler asks for them again; `onPublishError` hears about it.
 */
export async function ingestEvents(ctx: IngestContext, events: readonly IncomingEvent[], options: IngestOptions = {}): Promise<IngestResult> {
  if (events.length === 0) return { accepted: 0, duplicates: 0 };
  const shape = options.shape ?? 'batch';

  const unique = collapseDuplicateEvents(events);
  let inserted: StoredEvent[];
  try {
    inserted = await storeEvents(ctx.db, unique);
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

  const byScope = new Map<Scope, Array<[string, string]>>();
  for (const row of inserted) {
    const pairs = byScope.get(row.scope);
    if (pairs) pairs.push([row.organization_id, row.id]);
    else byScope.set(row.scope, [[row.organization_id, row.id]]);
  }
  if (ctx.metrics) {
    const received = new Map<Scope, number>();
    for (const event of events) received.set(event.scope, (received.get(event.scope) ?? 0) + 1);
    for (const [scope, count] of received) {
      const accepted = byScope.get(scope)?.length ?? 0;
      ctx.metrics.eventsIngested(scope, accepted, count - accepted);
    }
  }
  const timeoutMs = ctx.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
  await Promise.all(
    [...byScope].map(async ([scope, pairs]) => {
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

  return { accepted: inserted.length, duplicates: events.length - inserted.length };
}
