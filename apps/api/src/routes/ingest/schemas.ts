import { Type } from 'typebox';

/**
 * The event envelope's schemas live with the event (core `EventEnvelope`, `IngestBody`): the same
 * schema documents this route and is what parseIngestRequest validates with.
 */
export { EventEnvelope as IngestEvent, IngestBody } from '@notify/core';
export const IngestAccepted = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Events stored by this request.' }),
    duplicates: Type.Integer({ minimum: 0, description: 'Events already stored (same organization_id and id), or repeated within the batch.' }),
  },
  { description: 'Every event is durably stored; new ones are on their way to matching.' },
);
