import { SEVERITIES } from '../scopes';
import type { FieldKind } from './fields';
import { jsonTypeName } from './json';
import { MESSAGES } from './messages';
import { isRealUtcOffset } from '../validation/iso-date-time';
import type { ConditionIssue, Operator } from './types';
import { CONDITION_LIMITS } from './types';

/** Returns the problem with a single value, or null when it is acceptable. */
type ScalarCheck = (value: unknown) => string | null;

const SEVERITY_NAMES: ReadonlySet<string> = new Set(SEVERITIES);

function checkText(value: string, allowBlank: boolean): string | null {
  if (value.length > CONDITION_LIMITS.maxStringLength) return MESSAGES.tooLong;
  if (value.includes('\u0000')) return MESSAGES.nullCharacter;
  if (!allowBlank && value.length === 0) return MESSAGES.blank;
  return null;
}

const anyString: ScalarCheck = (v) => (typeof v === 'string' ? checkText(v, true) : MESSAGES.string);
const nonBlankString: ScalarCheck = (v) => (typeof v === 'string' ? checkText(v, false) : MESSAGES.string);
const finiteNumber = (v: number): string | null => (Number.isFinite(v) ? null : MESSAGES.number);

const severityName: ScalarCheck = (v) => {
  if (typeof v !== 'string') return MESSAGES.string;
  // Echoing a 1 MB string back in the message would be its own problem, so the text checks come first.
  return checkText(v, false) ?? (SEVERITY_NAMES.has(v.toLowerCase()) ? null : MESSAGES.severity(v));
};

const scalar: ScalarCheck = (v) => {
  if (typeof v === 'string') return checkText(v, true);
  if (typeof v === 'number') return finiteNumber(v);
  return typeof v === 'boolean' ? null : MESSAGES.scalar;
};

const stringOrNumber: ScalarCheck = (v) => {
  if (typeof v === 'string') return checkText(v, true);
  return typeof v === 'number' ? finiteNumber(v) : MESSAGES.stringOrNumber;
};

const boolean: ScalarCheck = (v) => (typeof v === 'boolean' ? null : MESSAGES.boolean);

const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))?$/;

const isoDatetime: ScalarCheck = (v) => {
  if (typeof v !== 'string') return MESSAGES.string;
  const text = checkText(v, false);
  if (text) return text;
  const m = ISO_DATETIME.exec(v);
  if (!m) return MESSAGES.datetime;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((part) => Number(part ?? 0)) as number[];
  // PostgreSQL refuses some offsets beyond a real zone's (+99:99 was a 500).
  if (!isRealUtcOffset(offsetHours!, offsetMinutes!)) return MESSAGES.datetime;
  // The pattern accepts 2024-02-31T25:61; a round trip through Date.UTC rejects impossible parts.
  const date = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  const valid =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return valid ? null : MESSAGES.datetime;
};

const EQUALITY: Record<FieldKind, ScalarCheck> = {
  string: anyString,
  string_array: anyString,
  severity: severityName,
  date: isoDatetime,
  any: scalar,
};

// contains_* and gte/lte exclude booleans on `data.*`: neither has a useful meaning for them.
const COMPARABLE: Record<FieldKind, ScalarCheck> = {
  string: anyString,
  string_array: anyString,
  severity: severityName,
  date: isoDatetime,
  any: stringOrNumber,
};

type Shape = { many: boolean; optional: boolean; check: ScalarCheck };

function shapeOf(operator: Operator, kind: FieldKind): Shape {
  switch (operator) {
    case 'eq':
      return { many: false, optional: false, check: EQUALITY[kind] };
    case 'in':
      return { many: true, optional: false, check: EQUALITY[kind] };
    case 'startswith':
    case 'endswith':
    case 'wildcard':
      return { many: false, optional: false, check: nonBlankString };
    case 'contains_any':
    case 'contains_all':
      return { many: true, optional: false, check: COMPARABLE[kind] };
    case 'exists':
      return { many: false, optional: true, check: boolean };
    case 'gte':
    case 'lte':
      return { many: false, optional: false, check: COMPARABLE[kind] };
  }
}

/**
 * Checks a condition's `value` for `operator` on a field of `kind`, pushing any
 * problems onto `issues`. Returns a copy safe to store (only meaningful when no issue was pushed).
 */
export function validateValue(
  operator: Operator,
  kind: FieldKind,
  present: boolean,
  value: unknown,
  param: string,
  issues: ConditionIssue[],
): unknown {
  const shape = shapeOf(operator, kind);
  if (!present) {
    if (!shape.optional) issues.push({ param, message: MESSAGES.required });
    return undefined;
  }
  if (value === null) {
    issues.push({ param, message: MESSAGES.notNull });
    return undefined;
  }
  if (!shape.many) {
    const message = shape.check(value);
    if (message) issues.push({ param, message });
    return value;
  }
  if (!Array.isArray(value)) {
    issues.push({ param, message: MESSAGES.list(jsonTypeName(value)) });
    return undefined;
  }
  if (value.length === 0) {
    issues.push({ param, message: MESSAGES.emptyList });
    return undefined;
  }
  // Checked before walking the items so a huge array costs nothing and yields one issue.
  if (value.length > CONDITION_LIMITS.maxValues) {
    issues.push({ param, message: MESSAGES.maxItems(CONDITION_LIMITS.maxValues) });
    return undefined;
  }
  const copy: unknown[] = [];
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    const message = shape.check(item);
    if (message) issues.push({ param: `${param}[${i}]`, message });
    copy.push(item);
  }
  return copy;
}
