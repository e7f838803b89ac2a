export { ingestEvents, DEFAULT_PUBLISH_TIMEOUT_MS, STORE_LINGER_UNTIL, type IngestContext, type MatchHere, type IngestOptions, type IngestResult } from './ingest-events';
export { createEventPublisher, type EventPublisher } from './publisher';
