/**
 * includes/event-json — an event as an e-mail shows it, in SQL.
 *
 * Takes:
 *   e               a row of `events` (EVENT_COLUMNS, MAIL_EVENT_COLUMNS, EVENT_JSON)
 *   stored          a jsonb expression holding a DeliveryEvent (mailEventOfStored: a delivery's test_event)
 * Returns:
 *   EVENT_COLUMNS       e.id … e.data: a DeliveryEvent's columns, under their own names
 *   MAIL_EVENT_COLUMNS  the same named as core's EventDetails (occurredAt as epoch ms, tags never null)
 *   mailEventOfStored   a json expression of one event, keys as MAIL_EVENT_COLUMNS
 *   EVENT_JSON          a scalar subquery: the row's DeliveryEvent as json
 * Used by: claim-deliveries, includes/claimed-delivery, read-event-details.
 */

/**
 * What an e-mail shows of an event: each column of `events` and its name in core's EventDetails
 * (the e-mail's event). Stored and read rows (DeliveryEvent) keep the column's name.
 */
const EVENT_FIELDS: ReadonlyArray<readonly [column: string, name: string]> = [
  ['id', 'id'], ['scope', 'scope'], ['occurred_at', 'occurredAt'], ['asset', 'asset'], ['asset_type', 'assetType'], ['severity', 'severity'],
  ['tags', 'tags'], ['title', 'title'], ['summary', 'summary'], ['url', 'url'], ['data', 'data'],
];

/** The columns of `events` (a row named `e`) that an e-mail shows of an event: a DeliveryEvent's keys. */
export const EVENT_COLUMNS = EVENT_FIELDS.map(([column]) => `e.${column}`).join(', ');

/**
 * EVENT_COLUMNS named as an e-mail's event is (core's EventDetails, tags never null): PostgreSQL's
 * JSON of a row of them is the e-mail's event with its time as epoch milliseconds, which the
 * composer parses where it renders (ComposeRequest.events in @notify/mail) without mapping a row's
 * names to it first. The claim aggregates such rows whole (`json_agg(e)`), which costs PostgreSQL
 * less than aggregating a json_build_object of each (measured in commit c5f385d). The time is a
 * number rather than a timestamp's text: PostgreSQL writes the row in the same time (measured in
 * commit 80272be), and the composer makes a Date of a number far faster than it parses a
 * timestamp (measured in commit 1a601d5).
 */
export const MAIL_EVENT_COLUMNS = EVENT_FIELDS.map(([column, name]) =>
  column === 'tags' ? `COALESCE(e.tags, '{}') AS tags`
  : column === 'occurred_at' ? `(date_part('epoch', e.occurred_at) * 1000)::bigint AS "${name}"`
  : column === name ? `e.${column}` : `e.${column} AS "${name}"`).join(', ');

/**
 * A stored event (a DeliveryEvent, as EVENT_JSON writes it: a test send's, in a delivery's
 * `test_event`) named as MAIL_EVENT_COLUMNS name its columns: one event, so built key by key.
 */
export const mailEventOfStored = (stored: string): string =>
  `json_build_object(${EVENT_FIELDS.map(([column, name]) => `'${name}', ${column === 'tags' ? `COALESCE(${stored}->'tags', '[]')` : `${stored}->'${column}'`}`).join(', ')})`;

/** An event as the e-mail of a delivery needs it (a DeliveryEvent), built in SQL from a row of `events` named `e`: a test send's one event, a preview's. */
export const EVENT_JSON = `(SELECT row_to_json(x) FROM (SELECT ${EVENT_COLUMNS}) x)`;
