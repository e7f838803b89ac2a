import { SEVERITIES } from '../scopes';
import type { FieldCatalog, FieldKind } from './fields';
import { EVENT_FIELDS, resolveField } from './fields';
import type { Filters, MatchableEvent, Predicate } from './types';
import { ValueSet } from './value-set';
import { wildcardToRegExp } from './wildcard';

/** Tests a field value that is known to be present (not undefined or null). */
type Test = (value: unknown) => boolean;
type Reader = (event: MatchableEvent) => unknown;

const ALWAYS: Predicate = () => true;
const NEVER: Predicate = () => false;
const DATA_PREFIX = 'data.';
const SEVERITY_RANK: ReadonlyMap<string, number> = new Map(SEVERITIES.map((name, rank) => [name, rank]));

/**
 * Turns filters into a predicate, doing all parsing up front so matching an event
 * allocates as little as possible. Expects filters that passed validateFilters;
 * a condition it cannot make sense of never holds rather than throwing.
 */
export function compileFilters(filters: Filters | null | undefined, fields: FieldCatalog = EVENT_FIELDS): Predicate {
  if (typeof filters !== 'object' || filters === null) return ALWAYS;
  const must = compileClause(filters.must, fields);
  const should = compileClause(filters.should, fields);
  const mustNot = compileClause(filters.must_not, fields);
  if (must.length === 0 && should.length === 0 && mustNot.length === 0) return ALWAYS;

  return (event) => {
    if (typeof event !== 'object' || event === null) return false;
    try {
      for (const holds of must) if (!holds(event)) return false;
      for (const holds of mustNot) if (holds(event)) return false;
      return should.length === 0 || should.some((holds) => holds(event));
    } catch {
      // Only an event with throwing getters lands here; it cannot be judged, so it does not match.
      return false;
    }
  };
}

function compileClause(clause: unknown, fields: FieldCatalog): Predicate[] {
  return Array.isArray(clause) ? clause.map((condition) => compileCondition(condition, fields)) : [];
}

function compileCondition(condition: unknown, fields: FieldCatalog): Predicate {
  if (typeof condition !== 'object' || condition === null) return NEVER;
  const { name, type, value } = condition as { name?: unknown; type?: unknown; value?: unknown };
  if (typeof name !== 'string') return NEVER;
  const resolved = resolveField(fields, name);
  if (!resolved.ok) return NEVER;
  const read = readerFor(name, resolved.key);

  if (type === 'exists') {
    const wanted = value !== false;
    return (event) => isPresent(read(event)) === wanted;
  }
  const test = testFor(type, resolved.spec.kind, value);
  if (!test) return NEVER;
  return (event) => {
    const found = read(event);
    return isPresent(found) && test(found);
  };
}

function readerFor(name: string, key: string | undefined): Reader {
  if (key !== undefined && name.startsWith(DATA_PREFIX)) {
    return (event) => {
      const data: unknown = event.data;
      // Own keys only: "data.constructor" must not find Object.prototype.constructor.
      return typeof data === 'object' && data !== null && Object.hasOwn(data, key)
        ? (data as Record<string, unknown>)[key]
        : undefined;
    };
  }
  // Catalog names are fixed identifiers, so a plain read cannot reach the prototype chain by accident.
  return (event) => (event as unknown as Record<string, unknown>)[name];
}

function testFor(type: unknown, kind: FieldKind, value: unknown): Test | null {
  switch (type) {
    case 'eq':
      return isScalar(value) ? anyItem(equalTo(value)) : null;
    case 'in':
    case 'contains_any': {
      if (!Array.isArray(value)) return null;
      const wanted = new ValueSet(value);
      return anyItem((item) => isScalar(item) && wanted.has(item));
    }
    case 'contains_all': {
      if (!Array.isArray(value)) return null;
      const wanted = new ValueSet(value);
      return (found) => wanted.isSubsetOf(new ValueSet(Array.isArray(found) ? found.filter(isScalar) : [found]));
    }
    case 'startswith':
    case 'endswith': {
      if (typeof value !== 'string') return null;
      const affix = value.toLowerCase();
      return type === 'startswith'
        ? anyItem((item) => typeof item === 'string' && item.toLowerCase().startsWith(affix))
        : anyItem((item) => typeof item === 'string' && item.toLowerCase().endsWith(affix));
    }
    case 'wildcard': {
      if (typeof value !== 'string') return null;
      const pattern = wildcardToRegExp(value);
      return anyItem((item) => typeof item === 'string' && pattern.test(item));
    }
    case 'gte':
    case 'lte':
      return orderTest(type, kind, value);
    default:
      return null;
  }
}

function orderTest(type: 'gte' | 'lte', kind: FieldKind, bound: unknown): Test | null {
  const holds = type === 'gte' ? (c: number) => c >= 0 : (c: number) => c <= 0;
  if (kind === 'severity') {
    const rank = typeof bound === 'string' ? SEVERITY_RANK.get(bound.toLowerCase()) : undefined;
    if (rank === undefined) return null;
    return anyItem((item) => {
      const itemRank = typeof item === 'string' ? SEVERITY_RANK.get(item.toLowerCase()) : undefined;
      return itemRank !== undefined && holds(itemRank - rank);
    });
  }
  if (typeof bound === 'number') {
    return anyItem((item) => typeof item === 'number' && holds(item - bound));
  }
  if (typeof bound === 'string') {
    // Plain code-unit order: right for ISO 8601 timestamps in one format, which is what this is for.
    return anyItem((item) => typeof item === 'string' && holds(item < bound ? -1 : item > bound ? 1 : 0));
  }
  return null;
}

function equalTo(wanted: string | number | boolean): Test {
  if (typeof wanted !== 'string') return (item) => item === wanted;
  const lower = wanted.toLowerCase();
  if (!isAscii(lower)) return (item) => typeof item === 'string' && item.toLowerCase() === lower;
  return (item) => typeof item === 'string' && equalsAsciiIgnoringCase(item, lower);
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * `item.toLowerCase() === lower` for an all-ASCII `lower`, without making the lowered copy (this
 * runs for every rule and silence an event meets). Lowering keeps every code unit in place except
 * U+0130, whose lowered form holds the non-ASCII U+0307 and so can never equal an ASCII string:
 * strings of other lengths differ, and an ASCII unit that differs decides. A non-ASCII unit
 * (the Kelvin sign lowers to "k") takes the full comparison.
 */
function equalsAsciiIgnoringCase(item: string, lower: string): boolean {
  if (item.length !== lower.length) return false;
  for (let i = 0; i < item.length; i++) {
    let unit = item.charCodeAt(i);
    if (unit >= 0x80) return item.toLowerCase() === lower;
    if (unit >= 0x41 && unit <= 0x5a) unit += 0x20;
    if (unit !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** A field holding an array matches when any element does. */
function anyItem(test: Test): Test {
  return (found) => (Array.isArray(found) ? found.some(test) : test(found));
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}
