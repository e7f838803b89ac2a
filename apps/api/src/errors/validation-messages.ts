import { jsonTypeName, messages, type FieldIssue, mergeIssues } from '@notify/core';

/** The subset of an Ajv error object that the mapping reads. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
}

/** `/members/0` -> `members`; `/plan/groups` -> `plan.groups`; `` -> `body`. */
function paramOf(instancePath: string, missing?: string): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (missing !== undefined) segments.push(missing);
  const upToIndex = segments.findIndex((segment) => /^\d+$/.test(segment));
  const kept = upToIndex === -1 ? segments : segments.slice(0, upToIndex);
  return kept.length ? kept.join('.') : 'body';
}

function typeMessage(expected: unknown, data: unknown): string {
  if (data === null) return messages.notNull;
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
      return typeMessage(error.params.type, error.data);
    case 'minimum':
      return messages.min(limit);
    case 'maximum':
      return messages.max(limit);
    case 'minLength':
      return limit <= 1 ? messages.notBlank : `Ensure this field has at least ${limit} characters.`;
    case 'maxLength':
      return messages.maxLength(limit);
    case 'enum':
      return messages.choice(error.data);
    case 'minItems':
      return limit <= 1 ? messages.emptyList : `Ensure this field has at least ${limit} elements.`;
    case 'maxItems':
      return messages.maxItems(limit);
    case 'format':
      if (error.params.format === 'uuid') return messages.uuid;
      if (error.params.format === 'email') return messages.email;
      if (error.params.format === 'date-time') return messages.datetime;
      return 'Enter a valid value.';
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

/** Issues found by a custom keyword carry their own params (e.g. `strategy.must[0].type`). */
interface NestedIssues {
  issues?: Array<{ param: string; message: string }>;
}

/**
 * Turns schema errors into the `parameters` of the validation body.
 * `deferred` fields report "required" only once the primary required fields are
 * present, as the reference API does for `{}` (spec: create lists name and
 * scope; update lists name and members).
 */
export function schemaErrorsToIssues(errors: readonly SchemaError[], deferred: readonly string[] = []): FieldIssue[] {
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
    const param = paramOf(error.instancePath, error.keyword === 'additionalProperties' ? String(error.params.additionalProperty) : error.keyword === 'required' ? String(error.params.missingProperty) : undefined);
    issues.push({ param, details: [messageOf(error)] });
  }
  return mergeIssues(issues);
}
