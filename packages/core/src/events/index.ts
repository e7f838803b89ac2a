export {
  INGEST_LIMITS,
  collapseDuplicateEvents,
  eventKey,
  eventParam,
  ingestMessages,
  parseIngestBody,
  parseIngestRequest,
  type IncomingEvent,
  type IngestRequest,
  type IngestShape,
} from './envelope';
