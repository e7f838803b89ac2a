import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import { isUuid } from '../ids';
import { hasControlCharacter } from '../text';
import { parseIsoDateTime } from '../validation/iso-date-time';
import { isPlainObject, ownValue } from '../conditions/json';
import { messages, jsonTypeName } from '../messages';
import { EventEnvelope, IngestBatch, INGEST_LIMITS, JSON_DATA_KEYWORD, TEXT_KEYWORD, type TextKind, type WireEvent } from './event';

/**
 * Compiles the event's schema (event.ts) into the validator ingest runs, with the keywords of
 * ours it names. Strings are checked by `x-text` alone (the built-in `minLength`/`maxLength` are
 * read by it, after trimming, rather than run on the untrimmed text), so a field gets one message.
 */

export const ingestMessages = {
  /** DRF's ProhibitNullCharactersValidator. */
  nullCharacters: 'Null characters are not allowed.',
  controlCharacters: 'Control characters are not allowed.',
  unpairedSurrogates: 'Unpaired surrogate characters are not allowed.',
  url: messages.url,
  /** DRF's JSONField. */
  json: 'Value must be valid JSON.',
  dataSize: (bytes: number) => `Ensure this field has no more than ${bytes} bytes when serialized as JSON.`,
  dataDepth: (levels: number) => `Ensure this field is nested no more than ${levels} levels deep.`,
  truncated: (count: number) => `Only the first ${count} problems are reported.`,
} as const;

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

/** Trims as DRF does, except for verbatim fields (ids are opaque). */
export function normalizeText(value: string, kind: TextKind): string {
  return kind === 'verbatim' ? value : value.trim();
}

function textProblem(value: string, kind: TextKind, maxLength: number | undefined): string | undefined {
  const bad = unstorable(value);
  if (bad) return bad;
  if (hasControlCharacter(value, { multiline: kind === 'multiline' })) return ingestMessages.controlCharacters;
  const text = normalizeText(value, kind);
  if (text.trim() === '') return messages.notBlank;
  if (maxLength !== undefined && exceeds(text, maxLength)) return messages.maxLength(maxLength);
  return undefined;
}

function isHttpUrl(value: string): boolean {
  const text = value.trim();
  // The URL parser would quietly drop inner white space; a link with any is not the link that was sent.
  if (/\s/.test(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
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

function dataProblem(value: unknown): string | undefined {
  if (value === null) return undefined;
  if (!isPlainObject(value)) return messages.object(jsonTypeName(value));
  const problem = jsonProblem(value, 1);
  if (problem) return problem;
  if (utf8Length(JSON.stringify(value)) > INGEST_LIMITS.dataMaxBytes) return ingestMessages.dataSize(INGEST_LIMITS.dataMaxBytes);
  return undefined;
}

/** Ajv's shape of a compiled keyword's function (its `DataValidateFunction`, not exported). */
type KeywordValidate = ((data: unknown) => boolean) & { errors?: Partial<ErrorObject>[] };

/** A keyword whose only error is one message of its own. */
function messageKeyword(keyword: string, problemOf: (data: unknown) => string | undefined): KeywordValidate {
  const validate: KeywordValidate = (data: unknown) => {
    const message = problemOf(data);
    validate.errors = message === undefined ? undefined : [{ keyword, message, params: {} }];
    return message === undefined;
  };
  return validate;
}

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes: false, useDefaults: false, allowUnionTypes: true, strictTypes: false });
  // Text lengths are x-text's (after trimming, in code points): the built-ins stay as documentation.
  for (const keyword of ['minLength', 'maxLength']) {
    ajv.removeKeyword(keyword);
    ajv.addKeyword({ keyword, schemaType: 'number' });
  }
  ajv.addKeyword({
    keyword: TEXT_KEYWORD,
    type: 'string',
    schemaType: 'string',
    errors: true,
    // Before `format`, so a URL with a control character is told about the character.
    before: 'format',
    compile: (kind: TextKind, parentSchema: AnySchemaObject) =>
      messageKeyword(TEXT_KEYWORD, (data) => textProblem(data as string, kind, parentSchema.maxLength as number | undefined)),
  });
  ajv.addKeyword({ keyword: JSON_DATA_KEYWORD, schemaType: 'boolean', errors: true, compile: () => messageKeyword(JSON_DATA_KEYWORD, dataProblem) });
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addFormat('date-time', { type: 'string', validate: (value) => parseIsoDateTime(value) !== undefined });
  ajv.addFormat('uri', { type: 'string', validate: isHttpUrl });
  return ajv;
}

const ajv = createAjv();

/** One event of the envelope. */
export const validateEventEnvelope: ValidateFunction<WireEvent> = ajv.compile<WireEvent>(EventEnvelope);

/**
 * The batch without its items: the list is checked (1 to 1,000) before any event is, so an
 * oversized batch costs one check rather than thousands of errors.
 */
export const validateBatchList: ValidateFunction = ajv.compile({
  ...IngestBatch,
  properties: { events: (({ items: _items, ...list }) => list)(IngestBatch.properties.events as unknown as Record<string, unknown>) },
  required: ['events'],
});

/** What a list field may hold at most, read from the schema. */
function maxItemsOf(key: string): number | undefined {
  const schema = (EventEnvelope.properties as Record<string, { maxItems?: number }>)[key];
  return schema?.maxItems;
}

export interface OwnEventFields {
  /** The fields for the schema to read. */
  fields: unknown;
  /** List fields longer than the schema allows, left out of `fields` so their items are never walked. */
  overlong: Array<{ key: string; maxItems: number }>;
}

/**
 * A copy of an event's own data properties, for the schema to read: getters are never run (an
 * accessor reads as a value that fails every type check), keys the envelope does not know are
 * left behind (the envelope ignores them), and an overlong list is reported rather than walked:
 * a 16 MiB body of one list must cost one message, not millions.
 */
export function ownEventFields(raw: unknown): OwnEventFields {
  if (!isPlainObject(raw)) return { fields: raw, overlong: [] };
  const fields: Record<string, unknown> = {};
  const overlong: OwnEventFields['overlong'] = [];
  for (const key of Object.keys(EventEnvelope.properties)) {
    let value = ownValue(raw, key);
    if (Array.isArray(value)) {
      const maxItems = maxItemsOf(key);
      if (maxItems !== undefined && value.length > maxItems) {
        overlong.push({ key, maxItems });
        continue;
      }
      const list = value;
      value = Array.from({ length: list.length }, (_, i) => ownValue(list, String(i)));
    }
    if (value !== undefined) fields[key] = value;
  }
  return { fields, overlong };
}
