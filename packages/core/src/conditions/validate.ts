import type { FieldCatalog, FieldKind, FieldSpec } from './fields';
import { EVENT_FIELDS, resolveField } from './fields';
import { isPlainObject, jsonTypeName, ownValue } from './json';
import { MESSAGES } from './messages';
import type { Condition, ConditionIssue, Filters, Operator, ValidationResult } from './types';
import { CLAUSES, CONDITION_LIMITS, isOperator } from './types';
import { validateValue } from './validate-value';

export interface ValidateOptions {
  /** Prefix of every issue's `param`; the request field holding the filters. */
  root?: string;
  fields?: FieldCatalog;
}

const CONDITION_KEYS: ReadonlySet<string> = new Set(['name', 'type', 'value']);

function isClause(key: string): key is keyof Filters {
  return (CLAUSES as readonly string[]).includes(key);
}

/** Checks untrusted input against the condition language; never throws. */
export function validateFilters(input: unknown, options: ValidateOptions = {}): ValidationResult {
  const root = options.root ?? 'strategy';
  const catalog = options.fields ?? EVENT_FIELDS;
  const issues: ConditionIssue[] = [];
  try {
    const value = validateRoot(input, root, catalog, issues);
    return issues.length === 0 && value ? { ok: true, value } : { ok: false, issues };
  } catch {
    // Only reachable through exotic objects (proxies with throwing traps); JSON input never gets here.
    return { ok: false, issues: [{ param: root, message: MESSAGES.dict('object') }] };
  }
}

function validateRoot(input: unknown, root: string, catalog: FieldCatalog, issues: ConditionIssue[]): Filters | null {
  if (input === undefined) {
    issues.push({ param: root, message: MESSAGES.required });
    return null;
  }
  if (!isPlainObject(input)) {
    issues.push({ param: root, message: MESSAGES.dict(jsonTypeName(input)) });
    return null;
  }
  const filters: Filters = { must: [], should: [], must_not: [] };
  for (const key of Object.keys(input)) {
    if (!isClause(key)) {
      issues.push({ param: `${root}.${key}`, message: MESSAGES.unknownClause });
      continue;
    }
    const clause = ownValue(input, key);
    // Undefined reads as absent so JS callers can spread optional clauses.
    if (clause !== undefined) filters[key] = validateClause(clause, `${root}.${key}`, catalog, issues);
  }
  return filters;
}

function validateClause(clause: unknown, param: string, catalog: FieldCatalog, issues: ConditionIssue[]): Condition[] {
  if (!Array.isArray(clause)) {
    issues.push({ param, message: MESSAGES.list(jsonTypeName(clause)) });
    return [];
  }
  if (clause.length > CONDITION_LIMITS.maxConditionsPerClause) {
    issues.push({ param, message: MESSAGES.maxItems(CONDITION_LIMITS.maxConditionsPerClause) });
    return [];
  }
  const conditions: Condition[] = [];
  for (let i = 0; i < clause.length; i++) {
    const condition = validateCondition(clause[i], `${param}[${i}]`, catalog, issues);
    if (condition) conditions.push(condition);
  }
  return conditions;
}

function validateCondition(
  input: unknown,
  param: string,
  catalog: FieldCatalog,
  issues: ConditionIssue[],
): Condition | null {
  if (!isPlainObject(input)) {
    issues.push({ param, message: MESSAGES.dict(jsonTypeName(input)) });
    return null;
  }
  const before = issues.length;
  const name = ownValue(input, 'name');
  const type = ownValue(input, 'type');
  const value = ownValue(input, 'value');

  const kind = checkName(name, `${param}.name`, catalog, issues);
  const operator = checkType(type, `${param}.type`, issues);
  if (operator && kind && typeof name === 'string' && !kind.operators.includes(operator)) {
    issues.push({ param: `${param}.type`, message: MESSAGES.operatorOnField(operator, name) });
  }
  let copy: unknown;
  if (operator) {
    // With the field unknown or mismatched, "any" is the loosest kind: whatever it rejects is wrong for every field.
    const valueKind: FieldKind = kind?.operators.includes(operator) ? kind.kind : 'any';
    copy = validateValue(operator, valueKind, value !== undefined, value, `${param}.value`, issues);
  }
  for (const key of Object.keys(input)) {
    if (!CONDITION_KEYS.has(key)) issues.push({ param: `${param}.${key}`, message: MESSAGES.unknownConditionKey });
  }
  if (issues.length !== before || !operator || typeof name !== 'string') return null;
  return copy === undefined ? { name, type: operator } : { name, type: operator, value: copy };
}

function checkName(
  name: unknown,
  param: string,
  catalog: FieldCatalog,
  issues: ConditionIssue[],
): FieldSpec | null {
  const problem = checkIdentifier(name);
  if (problem !== null || typeof name !== 'string') {
    issues.push({ param, message: problem ?? MESSAGES.string });
    return null;
  }
  const resolved = resolveField(catalog, name);
  if (!resolved.ok) {
    issues.push({ param, message: resolved.message });
    return null;
  }
  return resolved.spec;
}

function checkType(type: unknown, param: string, issues: ConditionIssue[]): Operator | null {
  const problem = checkIdentifier(type);
  if (problem !== null || typeof type !== 'string') {
    issues.push({ param, message: problem ?? MESSAGES.string });
    return null;
  }
  if (!isOperator(type)) {
    issues.push({ param, message: MESSAGES.choice(type) });
    return null;
  }
  return type;
}

/** Problems that make a name or type unusable before looking it up; checked first so messages never echo junk. */
function checkIdentifier(value: unknown): string | null {
  if (value === undefined) return MESSAGES.required;
  if (value === null) return MESSAGES.notNull;
  if (typeof value !== 'string') return MESSAGES.string;
  if (value.length === 0) return MESSAGES.blank;
  if (value.length > CONDITION_LIMITS.maxStringLength) return MESSAGES.tooLong;
  if (value.includes('\u0000')) return MESSAGES.nullCharacter;
  return null;
}
