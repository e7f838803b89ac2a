export { ingestEvents, DEFAULT_PUBLISH_TIMEOUT_MS, STORE_LINGER_UNTIL, MATCH_IN_STORE_UP_TO, type IngestContext, type MatchHere, type MatchInStore, type IngestOptions, type IngestResult } from './ingest-events';
export { createEventPublisher, type EventPublisher } from './publisher';
