import { messages, jsonTypeName } from '../messages';
import { mergeIssues, type FieldIssue } from '../errors';

/**
 * Ajv's errors in Django REST Framework's words (decisions §1): one mapping for every
 * schema-validated input, the HTTP routes' bodies and the event envelope alike.
 * The validators run Ajv with `verbose: true`, so an error carries the value and its schema.
 */

/** The subset of an Ajv error object that the mapping reads. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: { format?: unknown };
}

/** Messages of formats, as DRF words them; a format keyword may add its own here. */
const FORMAT_MESSAGES: Record<string, string> = {
  uuid: messages.uuid,
  email: messages.email,
  'date-time': messages.datetime,
  uri: messages.url,
};

function formatMessage(format: unknown): string | undefined {
  return typeof format === 'string' ? FORMAT_MESSAGES[format] : undefined;
}

function typeMessage(expected: unknown, error: SchemaError): string {
  const { data } = error;
  if (data === null) return messages.notNull;
  // DRF's date-time and UUID fields say what they want, whatever the type sent (a number is no date).
  const format = formatMessage(error.parentSchema?.format);
  if (format) return format;
  const type = Array.isArray(expected) ? expected.find((t) => t !== 'null') : expected;
  switch (type) {
    case 'boolean':
      return messages.boolean;
    case 'integer':
      return messages.integer;
    case 'number':
      return 'A valid number is required.';
    case 'string':
      return messages.string;
    case 'array':
      return messages.list(jsonTypeName(data));
    case 'object':
      return messages.object(jsonTypeName(data));
    default:
      return `Invalid value.`;
  }
}

function messageOf(error: SchemaError): string {
  const limit = Number(error.params.limit);
  switch (error.keyword) {
    case 'required':
      return messages.required;
    case 'type':
      return typeMessage(error.params.type, error);
    case 'minimum':
      return messages.min(limit);
    case 'maximum':
      return messages.max(limit);
    case 'minLength':
      return limit <= 1 ? messages.notBlank : `Ensure this field has at least ${limit} characters.`;
    case 'maxLength':
      return messages.maxLength(limit);
    case 'enum':
      // A schema of choices alone (no `type`) meets null here: DRF says "may not be null".
      return error.data === null ? messages.notNull : messages.choice(error.data);
    case 'minItems':
      return limit <= 1 ? messages.emptyList : `Ensure this field has at least ${limit} elements.`;
    case 'maxItems':
      return messages.maxItems(limit);
    case 'format':
      return formatMessage(error.params.format) ?? 'Enter a valid value.';
    case 'pattern':
      // The schemas say "not blank" (not only white space) with the pattern \S: DRF words that as below.
      if (error.params.pattern === '\\S') return messages.notBlank;
      return 'This value does not match the required pattern.';
    case 'not':
      return messages.immutable;
    case 'additionalProperties':
      return 'Unexpected field.';
    default:
      return error.message ?? 'Invalid value.';
  }
}

/**
 * How an error's path becomes a `param`:
 * - `field` (the rule routes): `/members/0` -> `members`, `/plan/groups` -> `plan.groups`;
 * - `indexed` (the event envelope): `/events/3/tags/1` -> `events[3].tags[1]`.
 * The root is `body` in both.
 */
export type ParamStyle = 'field' | 'indexed';

function segmentsOf(instancePath: string): string[] {
  return instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

export function paramOf(instancePath: string, style: ParamStyle = 'field', missing?: string): string {
  const segments = segmentsOf(instancePath);
  if (missing !== undefined) segments.push(missing);
  if (style === 'indexed') {
    let param = '';
    for (const segment of segments) param += /^\d+$/.test(segment) ? `[${segment}]` : param ? `.${segment}` : segment;
    return param || 'body';
  }
  const upToIndex = segments.findIndex((segment) => /^\d+$/.test(segment));
  const kept = upToIndex === -1 ? segments : segments.slice(0, upToIndex);
  return kept.length ? kept.join('.') : 'body';
}

/** Issues found by a custom keyword carry their own params (e.g. `strategy.must[0].type`). */
interface NestedIssues {
  issues?: Array<{ param: string; message: string }>;
}

export interface SchemaErrorOptions {
  /**
   * Fields that report "required" only once the primary required fields are present, as the
   * reference API does for `{}` (spec: create lists name and scope; update lists name and members).
   */
  deferred?: readonly string[];
  style?: ParamStyle;
  /** Prefix of every param (`events[3]`), for a part validated on its own. */
  prefix?: string;
}

/** Turns schema errors into the `parameters` of the validation body. */
export function schemaErrorsToIssues(errors: readonly SchemaError[], options: SchemaErrorOptions = {}): FieldIssue[] {
  const { deferred = [], style = 'field', prefix } = options;
  const issues: FieldIssue[] = [];
  const missing = (error: SchemaError) => error.keyword === 'required' && error.instancePath === '';
  const primaryMissing = errors.some((error) => missing(error) && !deferred.includes(String(error.params.missingProperty)));
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    if (primaryMissing && missing(error) && deferred.includes(String(error.params.missingProperty))) continue;
    const nested = (error.params as NestedIssues).issues;
    if (nested) {
      for (const issue of nested) issues.push({ param: issue.param, details: [issue.message] });
      continue;
    }
    const extra = error.keyword === 'additionalProperties' ? String(error.params.additionalProperty) : error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    let param = paramOf(error.instancePath, style, extra);
    if (prefix !== undefined) param = param === 'body' ? prefix : `${prefix}.${param}`;
    issues.push({ param, details: [messageOf(error)] });
  }
  return mergeIssues(issues);
}
