import { Type } from 'typebox';
import { INGEST_LIMITS, SCOPES, SEVERITIES } from '@notify/core';
import { StringEnum } from '../../schemas/common';

/**
 * The event envelope (product decisions §5), for the OpenAPI document. The route does not
 * validate with these schemas: the core validator (parseIngestRequest) does, so one pass
 * reports every problem with its index and the in-platform publisher checks exactly the same.
 */
const L = INGEST_LIMITS;
const nullable = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });

export const IngestEvent = Type.Unsafe<Record<string, unknown>>({
  $id: 'IngestEvent',
  type: 'object',
  description: 'One event. Unknown keys are ignored. Optional fields may be omitted or null, but not blank.',
  required: ['id', 'organization_id', 'scope', 'occurred_at', 'asset', 'title'],
  properties: {
    id: {
      type: 'string', minLength: 1, maxLength: L.idMaxLength,
      description: 'Chosen by the scanner, unique per organization; stored exactly as sent. Re-sending an id is harmless: it counts as a duplicate. No control characters.',
    },
    organization_id: { type: 'string', format: 'uuid', description: 'The organization the event is about; it must exist.' },
    scope: { ...StringEnum(SCOPES), description: 'The kind of event; rules watch one scope.' },
    occurred_at: {
      type: 'string', format: 'date-time', examples: ['2026-11-20T10:15:00Z'],
      description: 'ISO 8601: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]; without a zone, UTC. Stored to the millisecond.',
    },
    asset: { type: 'string', minLength: 1, maxLength: L.assetMaxLength, examples: ['mail.example.com'] },
    asset_type: nullable({ type: 'string', minLength: 1, maxLength: L.assetTypeMaxLength, examples: ['subdomain'] }),
    severity: { type: ['string', 'null'], enum: [...SEVERITIES, null] },
    tags: {
      type: ['array', 'null'], maxItems: L.maxTags,
      items: { type: 'string', minLength: 1, maxLength: L.tagMaxLength },
      description: 'Repeated tags collapse.',
    },
    title: { type: 'string', minLength: 1, maxLength: L.titleMaxLength },
    summary: nullable({ type: 'string', minLength: 1, maxLength: L.summaryMaxLength, description: 'Longer text; line breaks allowed.' }),
    url: nullable({ type: 'string', format: 'uri', maxLength: L.urlMaxLength, description: 'Absolute http(s) link to the finding.' }),
    data: {
      type: ['object', 'null'],
      additionalProperties: true,
      description: `Any JSON object, at most ${L.dataMaxBytes} bytes as compact JSON and ${L.dataMaxDepth} levels deep; rules can test its top-level keys as \`data.<key>\`.`,
      examples: [{ port: 3389, service: 'rdp' }],
    },
  },
});

const eventRef = { $ref: 'IngestEvent#' };

export const IngestBody = Type.Unsafe<unknown>({
  description:
    `One event, or \`{"events": [...]}\` with 1 to ${L.maxEvents} events (a body with a top-level \`events\` key is a batch). ` +
    'All or nothing: one invalid event rejects the whole batch, and nothing is stored.',
  oneOf: [
    eventRef,
    {
      type: 'object',
      required: ['events'],
      properties: { events: { type: 'array', minItems: 1, maxItems: L.maxEvents, items: eventRef } },
    },
  ],
});

export const IngestAccepted = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Events stored by this request.' }),
    duplicates: Type.Integer({ minimum: 0, description: 'Events already stored (same organization_id and id), or repeated within the batch.' }),
  },
  { description: 'Every event is durably stored; new ones are on their way to matching.' },
);
