import { hash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { SCOPES, SEVERITIES, type Scope, type Severity } from '../scopes';
import { Nullable } from '../validation/schema-helpers';

/**
 * The event: the one definition of its shape (product decisions §5). The schema below is what
 * scanners send to `POST /v1/ingest/events`; it documents the route (OpenAPI) and it is what the
 * validator compiles (envelope-validator.ts), so the two cannot drift. Every other shape of an event in the
 * code (the normalized event, a stored row, the in-platform input, what an e-mail shows) is a type
 * derived from it below.
 *
 * Two keywords of ours carry what JSON Schema cannot say (envelope-validator.ts):
 * - `x-text` on a text field: storable in PostgreSQL (no NUL, no unpaired surrogate), no control
 *   characters (`multiline` allows tabs and line breaks), trimmed (`verbatim`: kept exactly as sent)
 *   before `minLength`/`maxLength` are checked, in code points as PostgreSQL counts;
 * - `x-json-data` on `data`: only JSON values, at most `dataMaxBytes` as compact UTF-8 JSON and
 *   `dataMaxDepth` levels.
 */

export const INGEST_LIMITS = {
  /** Events in one `{"events": [...]}` body. */
  maxEvents: 1000,
  idMaxLength: 128,
  assetMaxLength: 1024,
  assetTypeMaxLength: 64,
  maxTags: 100,
  tagMaxLength: 128,
  titleMaxLength: 1024,
  summaryMaxLength: 10_000,
  urlMaxLength: 2048,
  fingerprintMaxLength: 256,
  /** UTF-8 bytes of `data` serialized as compact JSON. */
  dataMaxBytes: 16 * 1024,
  /** `data` itself is level 1; each nested object or array adds one. */
  dataMaxDepth: 8,
  /** Problems reported in one 400; a batch of broken events would otherwise answer with thousands. */
  maxIssues: 50,
} as const;

export const TEXT_KEYWORD = 'x-text';
export const JSON_DATA_KEYWORD = 'x-json-data';
/** How a text field is read: one line, trimmed (default); several lines, trimmed; or exactly as sent. */
export type TextKind = 'line' | 'multiline' | 'verbatim';

const L = INGEST_LIMITS;
const text = (maxLength: number, kind: TextKind = 'line', options: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength, [TEXT_KEYWORD]: kind, ...options });

export const EventEnvelope = Type.Object(
  {
    id: text(L.idMaxLength, 'verbatim', {
      description: 'Chosen by the scanner, unique per organization; stored exactly as sent. Re-sending an id is harmless: it counts as a duplicate. No control characters.',
    }),
    organization_id: Type.String({ format: 'uuid', description: 'The organization the event is about; it must exist.' }),
    // Choices without `type`: whatever is sent that is not one of them is "not a valid choice", as DRF says.
    scope: Type.Unsafe<Scope>({ enum: [...SCOPES], description: 'The kind of event; rules watch one scope.' }),
    occurred_at: Type.String({
      format: 'date-time',
      examples: ['2026-11-20T10:15:00Z'],
      description: 'ISO 8601: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]; without a zone, UTC. Stored to the millisecond.',
    }),
    asset: text(L.assetMaxLength, 'line', { examples: ['mail.example.com'] }),
    asset_type: Type.Optional(Nullable(text(L.assetTypeMaxLength, 'line', { examples: ['subdomain'] }))),
    severity: Type.Optional(Type.Unsafe<Severity | null>({ enum: [...SEVERITIES, null] })),
    tags: Type.Optional(Nullable(Type.Array(text(L.tagMaxLength), { maxItems: L.maxTags, description: 'Repeated tags collapse.' }))),
    title: text(L.titleMaxLength),
    summary: Type.Optional(Nullable(text(L.summaryMaxLength, 'multiline', { description: 'Longer text; line breaks allowed.' }))),
    url: Type.Optional(Nullable(text(L.urlMaxLength, 'line', { format: 'uri', description: 'Absolute http(s) link to the finding.' }))),
    fingerprint: Type.Optional(Nullable(text(L.fingerprintMaxLength, 'verbatim', {
      examples: ['db1.example.com:5432/tcp'],
      description:
        'The identity of the finding across scans (e.g. `asset:port/proto`), kept exactly as sent: rules with `renotify_after_hours` ' +
        'e-mail a finding once per that many hours. Omitted or null: derived from scope, asset and title.',
    }))),
    data: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({
      type: ['object', 'null'],
      additionalProperties: true,
      [JSON_DATA_KEYWORD]: true,
      description: `Any JSON object, at most ${L.dataMaxBytes} bytes as compact JSON and ${L.dataMaxDepth} levels deep; rules can test its top-level keys as \`data.<key>\`.`,
      examples: [{ port: 3389, service: 'rdp' }],
    })),
  },
  {
    $id: 'IngestEvent',
    description: 'One event. Unknown keys are ignored. Optional fields may be omitted or null, but not blank.',
  },
);

const eventRef = { $ref: 'IngestEvent#' };

/** `{"events": [...]}`. */
export const IngestBatch = Type.Object({
  events: Type.Unsafe<unknown[]>({ type: 'array', minItems: 1, maxItems: L.maxEvents, items: eventRef }),
});

/** What the route takes: one event, or a batch (a body with a top-level `events` key). */
export const IngestBody = Type.Unsafe<unknown>({
  description:
    `One event, or \`{"events": [...]}\` with 1 to ${L.maxEvents} events (a body with a top-level \`events\` key is a batch). ` +
    'All or nothing: one invalid event rejects the whole batch, and nothing is stored.',
  oneOf: [eventRef, IngestBatch],
});

/** An event as scanners send it. */
export type WireEvent = Static<typeof EventEnvelope>;

type OptionalField = { [K in keyof WireEvent]-?: undefined extends WireEvent[K] ? K : never }[keyof WireEvent];

/**
 * An event once validated, and as stored (the columns of `events`): every field present, an
 * absent optional one null, `occurred_at` a Date, `tags` a list.
 */
export type EventRecord = {
  [K in keyof WireEvent]-?: K extends 'occurred_at' ? Date : K extends 'tags' ? string[] : Exclude<WireEvent[K], undefined>;
};

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** The same fields, camelCase. */
export type Camelized<T> = { [K in keyof T as K extends string ? CamelCase<K> : never]: T[K] };

/** A validated event in the code's own case (organization id lower-cased, text trimmed). */
export type IncomingEvent = Camelized<EventRecord>;

/**
 * An event as platform code hands it to the publisher: IncomingEvent with the optional fields
 * optional, `occurredAt` a Date or an ISO 8601 string as scanners send it. An IncomingEvent is one too.
 */
export type EventInput = Camelized<Omit<EventRecord, OptionalField | 'occurred_at'>> &
  Partial<Camelized<{ [K in OptionalField]: K extends 'tags' ? readonly string[] | null : EventRecord[K] }>> & {
    occurredAt: Date | string;
  };

/** An event as an e-mail shows it: without its organization (known around it) and its fingerprint. */
export type EventDetails = Omit<IncomingEvent, 'organizationId' | 'fingerprint'>;

/** The wire shape of an in-platform event, so the one validator checks it as it checks scanners' events. */
export function toWireEvent(event: EventInput): unknown {
  // Plain JavaScript callers can pass anything: what is not an object goes to the validator as it is.
  if (typeof event !== 'object' || event === null) return event;
  const occurredAt = event.occurredAt instanceof Date
    ? (Number.isNaN(event.occurredAt.getTime()) ? 'Invalid Date' : event.occurredAt.toISOString())
    : event.occurredAt;
  return {
    id: event.id,
    organization_id: event.organizationId,
    scope: event.scope,
    occurred_at: occurredAt,
    asset: event.asset,
    asset_type: event.assetType,
    severity: event.severity,
    tags: event.tags,
    title: event.title,
    summary: event.summary,
    url: event.url,
    fingerprint: event.fingerprint,
    data: event.data,
  };
}

/** What names an event's finding: the scanner's fingerprint or, without one, scope, asset and title. */
type FindingOf = { scope: string; asset: string; title: string; fingerprint?: string | null };

/**
 * What findingKey hashes: the same for two events exactly when they report the same finding. A key
 * for a finding that is never stored (a preview's replay), without the hash's cost, a large share
 * of our CPU in a preview with a renotify window (profiled: see commit 5ce97c4).
 */
export function findingIdentity(event: FindingOf): string {
  return event.fingerprint ? `f\u0000${event.fingerprint}` : `d\u0000${event.scope}\u0000${event.asset}\u0000${event.title}`;
}

/**
 * The identity of an event's finding as a signed 64-bit integer (decimal): the first 8 bytes of
 * SHA-256 of its findingIdentity (the same finding reported again gives the same key). Two
 * findings of one rule share a key with odds of 2^-64.
 */
export function findingKey(event: FindingOf): string {
  return hash('sha256', findingIdentity(event), 'buffer').readBigInt64BE(0).toString();
}
