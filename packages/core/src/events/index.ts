export {
  EventEnvelope,
  IngestBatch,
  IngestBody,
  INGEST_LIMITS,
  toWireEvent,
  findingIdentity,
  findingKey,
  type Camelized,
  type EventInput,
  type EventRecord,
  type EventDetails,
  type IncomingEvent,
  type WireEvent,
} from './event';
export { ingestMessages } from './envelope-validator';
export {
  collapseDuplicateEvents,
  eventKey,
  eventParam,
  parseIngestRequest,
  type IngestRequest,
  type IngestShape,
} from './envelope';
