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
import { recordAssetsSql, type Database } from '@notify/db';
import type { Queues } from '@notify/queues';
import type { PipelineMetrics } from '../context';

export interface IngestContext {
  db: Database;
  queues: Pick<Queues, 'publishEvents'>;
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

const FOREIGN_KEY_VIOLATION = '23503';

// One statement for the whole batch: the columns travel as arrays and unnest() turns them back
// into rows. unnest() of a 2-D array would flatten it, so each row's tags travel as a JSON array.
// The same statement records the assets of the newly stored events in the inventory (assets).
const INSERT_EVENTS = `
  WITH inserted AS (
    INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data)
    SELECT r.organization_id, r.id, r.scope, r.occurred_at, r.asset, r.asset_type, r.severity,
           ARRAY(SELECT jsonb_array_elements_text(r.tags)), r.title, r.summary, r.url, r.data
      FROM unnest($1::uuid[], $2::text[], $3::scope[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
                  $8::jsonb[], $9::text[], $10::text[], $11::text[], $12::jsonb[])
        AS r(organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data)
    ON CONFLICT (organization_id, id) DO NOTHING
    RETURNING organization_id, id, scope, occurred_at, asset, asset_type, tags
  ), inventory AS (${recordAssetsSql('inserted')})
  SELECT organization_id::text, id, scope FROM inserted`;

/** The indices of events whose organization does not exist, found with one query. */
async function unknownOrganizations(db: Database, events: readonly IncomingEvent[]): Promise<number[]> {
  const ids = [...new Set(events.map((event) => event.organizationId))];
  const { rows } = await db.pool.query<{ id: string }>('SELECT id::text AS id FROM organizations WHERE id = ANY($1::uuid[])', [ids]);
  const known = new Set(rows.map((row) => row.id));
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
 * Stores validated events (from parseIngestBody) and hands the new ones to matching.
 *
 * All or nothing, and durable before anything else: an unknown organization is a
 * ValidationFailed that stores nothing; otherwise every event is written by one INSERT, which
 * commits on its own. An event whose (organization_id, id) is already stored is left as it is
 * and counted in `duplicates`, as are repeats within the batch (the first one counts).
 *
 * Publishing comes after the commit, so a matcher never looks for an event it cannot read yet.
 * It never fails the call: when Redis is down or slow, the events are stored with
 * `matched_at` null and the reconciler re-publishes them; `onPublishError` hears about it.
 */
export async function ingestEvents(ctx: IngestContext, events: readonly IncomingEvent[], options: IngestOptions = {}): Promise<IngestResult> {
  if (events.length === 0) return { accepted: 0, duplicates: 0 };
  const shape = options.shape ?? 'batch';

  const unknown = await unknownOrganizations(ctx.db, events);
  if (unknown.length) throw unknownOrganizationError(events, unknown, shape);

  const unique = collapseDuplicateEvents(events);
  let inserted: Array<{ organization_id: string; id: string; scope: Scope }>;
  try {
    ({ rows: inserted } = await ctx.db.pool.query(INSERT_EVENTS, [
      unique.map((event) => event.organizationId),
      unique.map((event) => event.id),
      unique.map((event) => event.scope),
      unique.map((event) => event.occurredAt.toISOString()),
      unique.map((event) => event.asset),
      unique.map((event) => event.assetType),
      unique.map((event) => event.severity),
      unique.map((event) => JSON.stringify(event.tags)),
      unique.map((event) => event.title),
      unique.map((event) => event.summary),
      unique.map((event) => event.url),
      unique.map((event) => (event.data === null ? null : JSON.stringify(event.data))),
    ]));
  } catch (error) {
    // An organization deleted between the check and the insert: the insert stored nothing.
    if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
      const gone = await unknownOrganizations(ctx.db, events);
      if (gone.length) throw unknownOrganizationError(events, gone, shape);
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
        await withTimeout(ctx.queues.publishEvents(scope, pairs), timeoutMs);
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
