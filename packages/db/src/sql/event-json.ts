/**
 * An event as the e-mail of a delivery needs it (a DeliveryEvent), built in SQL from a row of
 * `events` named `e`: the claim reads a period's events this way, a test send its one event.
 */
export const EVENT_JSON = `json_build_object('id', e.id, 'scope', e.scope, 'occurred_at', e.occurred_at, 'asset', e.asset, 'asset_type', e.asset_type,
                   'severity', e.severity, 'tags', e.tags, 'title', e.title, 'summary', e.summary, 'url', e.url, 'data', e.data)`;
