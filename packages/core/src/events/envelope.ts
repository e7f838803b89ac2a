import { jsonTypeName, messages } from '../messages';
import { ValidationFailed, type FieldIssue } from '../errors';
import { parseIsoDateTime } from '../validation/iso-date-time';
import { isPlainObject, ownValue } from '../conditions/json';
import { schemaErrorsToIssues, type SchemaError } from '../validation/schema-errors';
import { EventEnvelope, INGEST_LIMITS, type IncomingEvent, type WireEvent } from './event';
import { ingestMessages, normalizeText, ownEventFields, validateBatchList, validateEventEnvelope } from './envelope-validator';

/**
 * The event envelope scanners send to `POST /v1/ingest/events` (product decisions §5),
 * and the validator every producer goes through (the HTTP route and the in-platform publisher),
 * compiled from the event's one schema (event.ts).
 *
 * Choices the decisions leave open, written down here and in the API docs:
 * - A body is a batch when it has a top-level `events` key; anything else is one event.
 * - Strings are taken as sent: a number is not an id. Text fields are trimmed (as DRF does),
 *   except `id`, which is stored exactly as sent. Lengths count characters (code points), as
 *   PostgreSQL's VARCHAR does.
 * - Optional fields may be omitted or `null`; an empty string is "may not be blank".
 * - Single-line fields (`id`, `asset`, `asset_type`, `tags`, `title`) allow no control
 *   characters; `summary` allows tabs and line breaks; no text anywhere, `data` included,
 *   may hold NUL characters or unpaired surrogates (PostgreSQL cannot store them).
 * - `tags` that repeat collapse to the first; `data` must be a JSON object.
 * - Unknown keys are ignored, so scanners can send fields this version does not know yet.
 */

/** One event as the body, or `{"events": [...]}`: decides how error params are named. */
export type IngestShape = 'single' | 'batch';

export interface IngestRequest {
  shape: IngestShape;
  /** One per event of the body, in its order (duplicates included: see collapseDuplicateEvents). */
  events: IncomingEvent[];
}

/** The `param` of an event's field: `scope` for a single-event body, `events[3].scope` in a batch. */
export function eventParam(shape: IngestShape, index: number, field: string): string {
  return shape === 'single' ? field : `events[${index}].${field}`;
}

const FIELD_ORDER = new Map(Object.keys(EventEnvelope.properties).map((key, index) => [key, index]));

/** Problems of one event in the order of its fields, one message per field, as a person reads a form. */
function inFieldOrder(issues: FieldIssue[], prefix: string | undefined): FieldIssue[] {
  const start = prefix === undefined ? 0 : prefix.length + 1;
  const rank = (param: string) => FIELD_ORDER.get(/^[a-z_]+/.exec(param.slice(start))?.[0] ?? '') ?? -1;
  return issues
    .map((issue) => ({ param: issue.param, details: issue.details.slice(0, 1) }))
    .sort((a, b) => rank(a.param) - rank(b.param));
}

class Issues {
  readonly list: FieldIssue[] = [];
  truncated = false;

  add(issues: readonly FieldIssue[]): void {
    for (const issue of issues) {
      if (this.list.length >= INGEST_LIMITS.maxIssues) {
        this.truncated = true;
        return;
      }
      this.list.push(issue);
    }
  }

  /** Once a problem had to be left out, looking for more is wasted work. */
  get full(): boolean {
    return this.truncated;
  }

  throwIfAny(): void {
    if (!this.list.length) return;
    const parameters = [...this.list];
    if (this.truncated) parameters.push({ param: 'body', details: [ingestMessages.truncated(INGEST_LIMITS.maxIssues)] });
    throw new ValidationFailed(parameters);
  }
}

/** A valid event in the code's own shape: text trimmed (except `id`), organization id in lower case. */
function normalize(event: WireEvent): IncomingEvent {
  const trimmed = (value: string | null | undefined) => (value === undefined || value === null ? null : normalizeText(value, 'line'));
  const tags: string[] = [];
  for (const tag of event.tags ?? []) {
    const text = normalizeText(tag, 'line');
    if (!tags.includes(text)) tags.push(text);
  }
  return {
    id: event.id,
    organizationId: event.organization_id.toLowerCase(),
    scope: event.scope,
    occurredAt: parseIsoDateTime(event.occurred_at)!,
    asset: normalizeText(event.asset, 'line'),
    assetType: trimmed(event.asset_type),
    severity: event.severity ?? null,
    tags,
    title: normalizeText(event.title, 'line'),
    summary: trimmed(event.summary),
    url: trimmed(event.url),
    fingerprint: event.fingerprint ?? null,
    data: event.data ?? null,
  };
}

/** Validates one event against the schema; undefined when it has problems (added to `issues`). */
function parseEvent(raw: unknown, prefix: string | undefined, issues: Issues): IncomingEvent | undefined {
  // An item that is no object at all (null included) is one problem: "expected a dictionary".
  if (!isPlainObject(raw)) {
    issues.add([{ param: prefix ?? 'body', details: [messages.object(jsonTypeName(raw))] }]);
    return undefined;
  }
  const { fields, overlong } = ownEventFields(raw);
  const valid = validateEventEnvelope(fields);
  if (valid && !overlong.length) return normalize(fields as WireEvent);
  const found = schemaErrorsToIssues((validateEventEnvelope.errors ?? []) as SchemaError[], { style: 'indexed', prefix });
  for (const { key, maxItems } of overlong) found.push({ param: prefix === undefined ? key : `${prefix}.${key}`, details: [messages.maxItems(maxItems)] });
  issues.add(inFieldOrder(found, prefix));
  return undefined;
}

/**
 * Validates an ingest body: one event, or `{"events": [...]}` with 1 to 1,000 events.
 * All or nothing: any problem throws ValidationFailed listing every problem found
 * (up to INGEST_LIMITS.maxIssues), named `scope` for a single event and `events[3].scope` in a batch.
 */
export function parseIngestRequest(body: unknown): IngestRequest {
  const issues = new Issues();
  if (!isPlainObject(body)) {
    issues.add([{ param: 'body', details: [messages.object(jsonTypeName(body))] }]);
    issues.throwIfAny();
  }
  const object = body as Record<string, unknown>;
  if (!Object.hasOwn(object, 'events')) {
    const event = parseEvent(object, undefined, issues);
    issues.throwIfAny();
    return { shape: 'single', events: [event!] };
  }

  const list = ownValue(object, 'events');
  if (!validateBatchList({ events: list })) {
    issues.add(schemaErrorsToIssues((validateBatchList.errors ?? []) as SchemaError[], { style: 'indexed' }));
  }
  issues.throwIfAny();

  const raw = list as unknown[];
  const events: IncomingEvent[] = [];
  for (let i = 0; i < raw.length && !issues.full; i++) {
    const event = parseEvent(ownValue(raw, String(i)), `events[${i}]`, issues);
    if (event) events.push(event);
  }
  issues.throwIfAny();
  return { shape: 'batch', events };
}

/** The identity of an event: ids are unique per organization. */
export function eventKey(event: Pick<IncomingEvent, 'organizationId' | 'id'>): string {
  // A UUID has a fixed length, so the pair cannot be read two ways.
  return `${event.organizationId}:${event.id}`;
}

/** Events whose (organization, id) repeats within one batch collapse to the first. */
export function collapseDuplicateEvents(events: readonly IncomingEvent[]): IncomingEvent[] {
  const seen = new Set<string>();
  return events.filter((event) => {
    const key = eventKey(event);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
