import { SCOPES, SEVERITIES, type Scope, type Severity } from '../scopes';
import { jsonTypeName, messages } from '../messages';
import { ValidationFailed, type FieldIssue } from '../errors';
import { isUuid } from '../ids';
import { hasControlCharacter } from '../text';
import { parseIsoDateTime } from '../rules/list-query';
import { isPlainObject, ownValue } from '../conditions/json';

/**
 * The event envelope scanners send to `POST /v1/ingest/events` (product decisions §5),
 * and the validator every producer goes through (the HTTP route and the in-platform publisher).
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
  /** UTF-8 bytes of `data` serialized as compact JSON. */
  dataMaxBytes: 16 * 1024,
  /** `data` itself is level 1; each nested object or array adds one. */
  dataMaxDepth: 8,
  /** Problems reported in one 400; a batch of broken events would otherwise answer with thousands. */
  maxIssues: 50,
} as const;

/** An event that passed validation, normalized (camelCase, trimmed, org id in lower case). */
export interface IncomingEvent {
  id: string;
  organizationId: string;
  scope: Scope;
  occurredAt: Date;
  asset: string;
  assetType: string | null;
  severity: Severity | null;
  tags: string[];
  title: string;
  summary: string | null;
  url: string | null;
  data: Record<string, unknown> | null;
}

/** One event as the body, or `{"events": [...]}`: decides how error params are named. */
export type IngestShape = 'single' | 'batch';

export interface IngestRequest {
  shape: IngestShape;
  /** One per event of the body, in its order (duplicates included: see collapseDuplicateEvents). */
  events: IncomingEvent[];
}

export const ingestMessages = {
  /** DRF's ProhibitNullCharactersValidator. */
  nullCharacters: 'Null characters are not allowed.',
  controlCharacters: 'Control characters are not allowed.',
  unpairedSurrogates: 'Unpaired surrogate characters are not allowed.',
  /** DRF's URLField. */
  url: 'Enter a valid URL.',
  /** DRF's JSONField. */
  json: 'Value must be valid JSON.',
  dataSize: (bytes: number) => `Ensure this field has no more than ${bytes} bytes when serialized as JSON.`,
  dataDepth: (levels: number) => `Ensure this field is nested no more than ${levels} levels deep.`,
  truncated: (count: number) => `Only the first ${count} problems are reported.`,
} as const;

/** The `param` of an event's field: `scope` for a single-event body, `events[3].scope` in a batch. */
export function eventParam(shape: IngestShape, index: number, field: string): string {
  return shape === 'single' ? field : `events[${index}].${field}`;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Length in code points: what PostgreSQL counts, and what a user calls characters. */
function exceeds(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** What PostgreSQL cannot store in text or jsonb. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return ingestMessages.nullCharacters;
  if (LONE_SURROGATE.test(text)) return ingestMessages.unpairedSurrogates;
  return undefined;
}

interface TextRule {
  max: number;
  /** Keep surrounding white space (ids are opaque). */
  verbatim?: boolean;
  multiline?: boolean;
}

type Checked<T> = { ok: true; value: T } | { ok: false; message: string };
const fail = (message: string) => ({ ok: false, message }) as const;
const ok = <T>(value: T) => ({ ok: true, value }) as const;

function checkText(value: unknown, rule: TextRule): Checked<string> {
  if (typeof value !== 'string') return fail(messages.string);
  const bad = unstorable(value);
  if (bad) return fail(bad);
  if (hasControlCharacter(value, { multiline: rule.multiline === true })) return fail(ingestMessages.controlCharacters);
  const text = rule.verbatim ? value : value.trim();
  if (text.trim() === '') return fail(messages.notBlank);
  if (exceeds(text, rule.max)) return fail(messages.maxLength(rule.max));
  return ok(text);
}

function checkUrl(value: unknown): Checked<string> {
  const text = checkText(value, { max: INGEST_LIMITS.urlMaxLength });
  if (!text.ok) return text;
  // The URL parser would quietly drop inner white space; a link with any is not the link that was sent.
  if (/\s/.test(text.value)) return fail(ingestMessages.url);
  let url: URL;
  try {
    url = new URL(text.value);
  } catch {
    return fail(ingestMessages.url);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return fail(ingestMessages.url);
  return text;
}

/** Walks a JSON value: only JSON types, storable strings and keys, bounded depth. Never runs getters. */
function jsonProblem(value: unknown, depth: number): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'string') return unstorable(value);
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : ingestMessages.json;
  const container = Array.isArray(value) || isPlainObject(value);
  if (!container) return ingestMessages.json;
  // Checked before descending, so a cyclic or absurdly deep value stops here.
  if (depth > INGEST_LIMITS.dataMaxDepth) return ingestMessages.dataDepth(INGEST_LIMITS.dataMaxDepth);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!Object.hasOwn(value, i)) return ingestMessages.json;
      const problem = jsonProblem(ownValue(value, String(i)), depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const problem = unstorable(key) ?? jsonProblem(ownValue(value, key), depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

function checkData(value: unknown): Checked<Record<string, unknown>> {
  if (!isPlainObject(value)) return fail(messages.object(jsonTypeName(value)));
  const problem = jsonProblem(value, 1);
  if (problem) return fail(problem);
  if (utf8Length(JSON.stringify(value)) > INGEST_LIMITS.dataMaxBytes) return fail(ingestMessages.dataSize(INGEST_LIMITS.dataMaxBytes));
  return ok(value);
}

class Issues {
  readonly list: FieldIssue[] = [];
  truncated = false;
  /** Every problem found, reported or not. */
  seen = 0;

  add(param: string, detail: string): void {
    this.seen++;
    if (this.list.length >= INGEST_LIMITS.maxIssues) {
      this.truncated = true;
      return;
    }
    this.list.push({ param, details: [detail] });
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

/** Validates one event object; undefined when it has problems (already added to `issues`). */
function parseEvent(raw: unknown, param: (field: string) => string, objectParam: string, issues: Issues): IncomingEvent | undefined {
  if (!isPlainObject(raw)) {
    issues.add(objectParam, messages.object(jsonTypeName(raw)));
    return undefined;
  }
  const before = issues.seen;
  const field = (name: string) => ownValue(raw, name);

  function required<T>(name: string, check: (value: unknown) => Checked<T>): T | undefined {
    const value = field(name);
    if (value === undefined) return void issues.add(param(name), messages.required);
    if (value === null) return void issues.add(param(name), messages.notNull);
    const result = check(value);
    if (!result.ok) return void issues.add(param(name), result.message);
    return result.value;
  }
  function optional<T>(name: string, check: (value: unknown) => Checked<T>): T | null {
    const value = field(name);
    if (value === undefined || value === null) return null;
    const result = check(value);
    if (!result.ok) {
      issues.add(param(name), result.message);
      return null;
    }
    return result.value;
  }
  const choice = <T extends string>(allowed: readonly T[]) => (value: unknown): Checked<T> =>
    typeof value === 'string' && (allowed as readonly string[]).includes(value) ? ok(value as T) : fail(messages.choice(value));

  const id = required('id', (value) => checkText(value, { max: INGEST_LIMITS.idMaxLength, verbatim: true }));
  const organizationId = required('organization_id', (value) =>
    typeof value === 'string' && isUuid(value) ? ok(value.toLowerCase()) : fail(messages.uuid));
  const scope = required('scope', choice(SCOPES));
  const occurredAt = required('occurred_at', (value) => {
    const date = typeof value === 'string' ? parseIsoDateTime(value) : undefined;
    return date ? ok(date) : fail(messages.datetime);
  });
  const asset = required('asset', (value) => checkText(value, { max: INGEST_LIMITS.assetMaxLength }));
  const assetType = optional('asset_type', (value) => checkText(value, { max: INGEST_LIMITS.assetTypeMaxLength }));
  const severity = optional('severity', choice(SEVERITIES));
  const tags = parseTags(field('tags'), param('tags'), issues);
  const title = required('title', (value) => checkText(value, { max: INGEST_LIMITS.titleMaxLength }));
  const summary = optional('summary', (value) => checkText(value, { max: INGEST_LIMITS.summaryMaxLength, multiline: true }));
  const url = optional('url', checkUrl);
  const data = optional('data', checkData);

  if (issues.seen !== before) return undefined;
  return {
    id: id!,
    organizationId: organizationId!,
    scope: scope!,
    occurredAt: occurredAt!,
    asset: asset!,
    assetType,
    severity,
    tags,
    title: title!,
    summary,
    url,
    data,
  };
}

function parseTags(value: unknown, param: string, issues: Issues): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    issues.add(param, messages.list(jsonTypeName(value)));
    return [];
  }
  if (value.length > INGEST_LIMITS.maxTags) {
    issues.add(param, messages.maxItems(INGEST_LIMITS.maxTags));
    return [];
  }
  const tags: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const result = checkText(ownValue(value, String(i)), { max: INGEST_LIMITS.tagMaxLength });
    if (!result.ok) issues.add(`${param}[${i}]`, result.message);
    else if (!tags.includes(result.value)) tags.push(result.value);
  }
  return tags;
}

/**
 * Validates an ingest body: one event, or `{"events": [...]}` with 1 to 1,000 events.
 * All or nothing: any problem throws ValidationFailed listing every problem found
 * (up to INGEST_LIMITS.maxIssues), named `scope` for a single event and `events[3].scope` in a batch.
 */
export function parseIngestRequest(body: unknown): IngestRequest {
  const issues = new Issues();
  if (!isPlainObject(body)) {
    issues.add('body', messages.object(jsonTypeName(body)));
    issues.throwIfAny();
  }
  const object = body as Record<string, unknown>;
  if (!Object.hasOwn(object, 'events')) {
    const event = parseEvent(object, (field) => field, 'body', issues);
    issues.throwIfAny();
    return { shape: 'single', events: [event!] };
  }

  const list = ownValue(object, 'events');
  if (list === null) issues.add('events', messages.notNull);
  else if (!Array.isArray(list)) issues.add('events', messages.list(jsonTypeName(list)));
  else if (list.length === 0) issues.add('events', messages.emptyList);
  else if (list.length > INGEST_LIMITS.maxEvents) issues.add('events', messages.maxItems(INGEST_LIMITS.maxEvents));
  issues.throwIfAny();

  const raw = list as unknown[];
  const events: IncomingEvent[] = [];
  for (let i = 0; i < raw.length && !issues.full; i++) {
    const event = parseEvent(ownValue(raw, String(i)), (field) => eventParam('batch', i, field), `events[${i}]`, issues);
    if (event) events.push(event);
  }
  issues.throwIfAny();
  return { shape: 'batch', events };
}

/** parseIngestRequest, events only. */
export function parseIngestBody(body: unknown): IncomingEvent[] {
  return parseIngestRequest(body).events;
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
