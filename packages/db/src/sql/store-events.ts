import type { EventRecord, IncomingEvent } from '@notify/core';
import { clientOf, named, poolOf, type DatabaseHandle, type Transaction } from '../client';
import type { UnmatchedEvent } from './lock-unmatched-events';

/**
 * An INSERT … SELECT that records the assets of the rows of `source` (a CTE or table with
 * organization_id, asset, asset_type, tags, scope, occurred_at), one row per asset:
 * tags and scopes are merged, first/last seen widened, and the asset_type is the one of the
 * latest event that named one. Rows are grouped first (ON CONFLICT cannot touch a row twice
 * in one statement) and written in key order, so concurrent batches lock rows in the same
 * order and cannot deadlock each other. An event that changes nothing writes nothing.
 */
function recordAssetsSql(source: string): string {
  return `
    INSERT INTO assets AS a (organization_id, asset, asset_type, tags, scopes, first_seen, last_seen, asset_lower, asset_lower_reversed, tags_lower)
    SELECT s.organization_id, s.asset,
           (array_agg(s.asset_type ORDER BY s.occurred_at DESC) FILTER (WHERE s.asset_type IS NOT NULL))[1],
           COALESCE(array_agg(DISTINCT t.tag) FILTER (WHERE t.tag IS NOT NULL), '{}'),
           array_agg(DISTINCT s.scope),
           min(s.occurred_at), max(s.occurred_at),
           lower(s.asset), reverse(lower(s.asset)),
           COALESCE(array_agg(DISTINCT lower(t.tag)) FILTER (WHERE t.tag IS NOT NULL), '{}')
      FROM ${source} s LEFT JOIN LATERAL unnest(s.tags) AS t(tag) ON true
     GROUP BY s.organization_id, s.asset
     ORDER BY s.organization_id, s.asset
    ON CONFLICT (organization_id, asset) DO UPDATE SET
      asset_type = CASE WHEN EXCLUDED.last_seen >= a.last_seen THEN COALESCE(EXCLUDED.asset_type, a.asset_type)
                        ELSE COALESCE(a.asset_type, EXCLUDED.asset_type) END,
      tags = CASE WHEN a.tags @> EXCLUDED.tags THEN a.tags
                  ELSE ARRAY(SELECT DISTINCT u FROM unnest(a.tags || EXCLUDED.tags) u ORDER BY u) END,
      tags_lower = CASE WHEN a.tags_lower @> EXCLUDED.tags_lower THEN a.tags_lower
                        ELSE ARRAY(SELECT DISTINCT u FROM unnest(a.tags_lower || EXCLUDED.tags_lower) u ORDER BY u) END,
      scopes = CASE WHEN a.scopes @> EXCLUDED.scopes THEN a.scopes
                    ELSE ARRAY(SELECT DISTINCT u FROM unnest(a.scopes || EXCLUDED.scopes) u ORDER BY u) END,
      first_seen = LEAST(a.first_seen, EXCLUDED.first_seen),
      last_seen = GREATEST(a.last_seen, EXCLUDED.last_seen)
    WHERE EXCLUDED.last_seen > a.last_seen
       OR EXCLUDED.first_seen < a.first_seen
       OR NOT (COALESCE(a.tags, '{}') @> EXCLUDED.tags)
       OR NOT (COALESCE(a.scopes, '{}') @> EXCLUDED.scopes)
       OR (EXCLUDED.asset_type IS NOT NULL AND a.asset_type IS DISTINCT FROM EXCLUDED.asset_type
           AND (a.asset_type IS NULL OR EXCLUDED.last_seen >= a.last_seen))`;
}

/**
 * One statement for the whole batch: the columns travel as arrays and unnest() turns them back
 * into rows. unnest() of a 2-D array would flatten it, so each row's tags travel as a JSON array.
 * The same statement records the assets of the newly stored events in the inventory (assets).
 * `matched`: the events are stored matched at $14 (matched in the same transaction, see
 * storeEventsToMatch), and each is answered as lockUnmatchedEvents reads one, oldest first.
 */
const insertEvents = (matched: boolean): string => `
  WITH inserted AS (
    INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data, fingerprint${matched ? ', matched_at' : ''})
    SELECT r.organization_id, r.id, r.scope, r.occurred_at, r.asset, r.asset_type, r.severity,
           ARRAY(SELECT jsonb_array_elements_text(r.tags)), r.title, r.summary, r.url, r.data, r.fingerprint${matched ? ', $14::timestamptz' : ''}
      FROM unnest($1::uuid[], $2::text[], $3::scope[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
                  $8::jsonb[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::text[])
        AS r(organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data, fingerprint)
     -- Events are partitioned by the month they arrive in (received_at, the database's clock):
     -- this month's unique index on (organization_id, id) is the arbiter below, and ids stored in
     -- earlier months are skipped here, one index probe per earlier month kept (later months,
     -- this one among them, are pruned from the plan).
     WHERE NOT EXISTS (SELECT 1 FROM events e
                        WHERE e.organization_id = r.organization_id AND e.id = r.id
                          AND e.received_at < date_trunc('month', now(), 'UTC'))
    ON CONFLICT DO NOTHING
    RETURNING organization_id, id, scope, occurred_at, asset, asset_type, tags${matched ? ', received_at, severity, title, data, fingerprint' : ''}
  ), inventory AS (${recordAssetsSql('inserted')})
  ${matched
    ? `SELECT organization_id::text, id, received_at::text AS received_at, scope, occurred_at, asset, asset_type, severity, tags, title, data, fingerprint
       FROM inserted ORDER BY occurred_at, id`
    : 'SELECT organization_id::text, id, scope FROM inserted'}`;

const INSERT_EVENTS = insertEvents(false);
const INSERT_MATCHED_EVENTS = insertEvents(true);

/** The parameters of insertEvents' statement, $1 to $13. */
const eventColumns = (events: readonly IncomingEvent[]): unknown[] => [
  events.map((event) => event.organizationId),
  events.map((event) => event.id),
  events.map((event) => event.scope),
  events.map((event) => event.occurredAt.toISOString()),
  events.map((event) => event.asset),
  events.map((event) => event.assetType),
  events.map((event) => event.severity),
  events.map((event) => JSON.stringify(event.tags)),
  events.map((event) => event.title),
  events.map((event) => event.summary),
  events.map((event) => event.url),
  events.map((event) => (event.data === null ? null : JSON.stringify(event.data))),
  events.map((event) => event.fingerprint),
];

export type StoredEvent = Pick<EventRecord, 'organization_id' | 'id' | 'scope'>;

/**
 * Stores events (unique within the batch) and records their assets in the inventory, in one
 * statement that commits on its own. An event whose (organization_id, id) is stored already is
 * left as it is. Returns the events this call stored. An organization that does not exist fails
 * the whole statement with a foreign key violation (isForeignKeyViolation).
 */
export async function storeEvents(db: DatabaseHandle, events: readonly IncomingEvent[]): Promise<StoredEvent[]> {
  const { rows } = await poolOf(db).query<StoredEvent>(named('store-events', INSERT_EVENTS, eventColumns(events)));
  return rows;
}

/**
 * Stores events as storeEvents does, in the caller's transaction, which matches them before it
 * commits: they are stored matched at `matchedAt` (neither a match job nor the reconciler asks for
 * them), and answered as lockUnmatchedEvents reads events to match, oldest first. Should the
 * transaction roll back, nothing of them is stored.
 */
export async function storeEventsToMatch(tx: Transaction, events: readonly IncomingEvent[], matchedAt: Date): Promise<UnmatchedEvent[]> {
  const { rows } = await clientOf(tx).query<UnmatchedEvent>(named('store-events-to-match', INSERT_MATCHED_EVENTS, [...eventColumns(events), matchedAt]));
  return rows;
}
