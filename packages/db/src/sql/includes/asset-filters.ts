/**
 * includes/asset-filters — the condition language (core's Filters, validated against ASSET_FIELDS)
 * compiled to SQL over the asset inventory.
 *
 * Takes:
 *   a        a row of `assets` (columns asset, asset_lower, asset_lower_reversed, asset_type,
 *            tags_lower, scopes, first_seen, last_seen)
 *   bind     a Bind: adds a value to the statement's parameters and returns its placeholder ($n);
 *            values never enter the SQL text
 * Returns:
 *   filtersSql(…)    a boolean expression: must (all), should (one at least, when any), must_not (none)
 *   conditionSql(…)  a boolean expression of one condition, never NULL; unknown fields or operators never hold
 *   wildcardToLike   (TypeScript) a `*`/`?` glob as a LIKE pattern (escape character `\`)
 * Used by: read-asset-page.
 */
import { ASSET_FIELDS, SCOPES, type Condition, type Filters } from '@notify/core';

/** Adds a bound parameter and returns its placeholder ($n). Values never enter the SQL text. */
export type Bind = (value: unknown) => string;

const SCOPE_NAMES: ReadonlySet<string> = new Set(SCOPES);
const TRUE = 'TRUE';
const FALSE = 'FALSE';

/** `*`/`?` glob → LIKE pattern: LIKE's own `%`, `_` and the escape character are taken literally. */
export function wildcardToLike(pattern: string): string {
  return pattern.replace(/[\\%_*?]/g, (char) => (char === '*' ? '%' : char === '?' ? '_' : `\\${char}`));
}

/** The literal text before the first and after the last wildcard, for index-friendly hints. */
function literalEnds(pattern: string): { prefix: string; suffix: string } {
  const first = pattern.search(/[*?]/);
  if (first < 0) return { prefix: pattern, suffix: pattern };
  const last = Math.max(pattern.lastIndexOf('*'), pattern.lastIndexOf('?'));
  return { prefix: pattern.slice(0, first), suffix: pattern.slice(last + 1) };
}

/** ISO 8601 as validated by the condition language; a time without a zone is UTC. */
function timestamp(value: string): string {
  return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
}

const lowered = (bind: Bind, values: unknown) => `ARRAY(SELECT lower(v) FROM unnest(${bind(values)}::text[]) v)`;

/**
 * A text field. `folded` is lower(field) and `reversed` reverse(lower(field)); for `asset`
 * both are stored columns with SP-GiST indexes, so equality, prefixes (^@) and suffixes use them.
 */
interface TextField {
  kind: 'text';
  column: string;
  folded: string;
  reversed: string;
  nullable: boolean;
  /** Add ^@ hints for the literal ends of wildcard patterns (worth it only with an index). */
  indexed: boolean;
}

type FieldSql =
  | TextField
  | { kind: 'tags'; column: string }
  | { kind: 'scopes'; column: string }
  | { kind: 'date'; column: string };

const FIELD_SQL: Readonly<Record<string, FieldSql>> = {
  asset: { kind: 'text', column: 'a.asset', folded: 'a.asset_lower', reversed: 'a.asset_lower_reversed', nullable: false, indexed: true },
  asset_type: { kind: 'text', column: 'a.asset_type', folded: 'lower(a.asset_type)', reversed: 'reverse(lower(a.asset_type))', nullable: true, indexed: false },
  tags: { kind: 'tags', column: 'a.tags_lower' },
  scopes: { kind: 'scopes', column: 'a.scopes' },
  first_seen: { kind: 'date', column: 'a.first_seen' },
  last_seen: { kind: 'date', column: 'a.last_seen' },
};

function textCondition(field: TextField, condition: Condition, bind: Bind): string {
  const { folded, reversed } = field;
  const value = condition.value;
  let sql: string;
  switch (condition.type) {
    case 'exists': {
      const wanted = value !== false;
      if (!field.nullable) return wanted ? TRUE : FALSE;
      return `${field.column} IS ${wanted ? 'NOT ' : ''}NULL`;
    }
    case 'eq':
      sql = `${folded} = lower(${bind(value)}::text)`;
      break;
    case 'in':
      sql = `${folded} = ANY(${lowered(bind, value)})`;
      break;
    case 'startswith':
      sql = `${folded} ^@ lower(${bind(value)}::text)`;
      break;
    case 'endswith':
      sql = `${reversed} ^@ reverse(lower(${bind(value)}::text))`;
      break;
    case 'wildcard': {
      const pattern = String(value);
      const parts = [`${folded} LIKE lower(${bind(wildcardToLike(pattern))}::text) ESCAPE '\\'`];
      if (field.indexed) {
        const { prefix, suffix } = literalEnds(pattern);
        if (prefix) parts.unshift(`${folded} ^@ lower(${bind(prefix)}::text)`);
        if (suffix) parts.unshift(`${reversed} ^@ reverse(lower(${bind(suffix)}::text))`);
      }
      sql = parts.join(' AND ');
      break;
    }
    default:
      return FALSE;
  }
  // Two-valued logic: a missing value makes the condition false, never NULL (must_not relies on it).
  return field.nullable ? `(${field.column} IS NOT NULL AND ${sql})` : `(${sql})`;
}

/** Tags: any element matching is enough, as for arrays in rule strategies; compared in lower case. */
function tagsCondition(column: string, condition: Condition, bind: Bind): string {
  const value = condition.value;
  const anyTag = (test: string) => `EXISTS (SELECT 1 FROM unnest(${column}) t WHERE ${test})`;
  switch (condition.type) {
    case 'exists':
      // An asset without tags has none: exists is false for it.
      return value === false ? `COALESCE(cardinality(${column}), 0) = 0` : `COALESCE(cardinality(${column}), 0) > 0`;
    case 'eq':
      return `(${column} @> ARRAY[lower(${bind(value)}::text)])`;
    case 'in':
    case 'contains_any':
      return `(${column} && ${lowered(bind, value)})`;
    case 'contains_all':
      return `(${column} @> ${lowered(bind, value)})`;
    case 'startswith':
      return anyTag(`t ^@ lower(${bind(value)}::text)`);
    case 'endswith':
      return anyTag(`reverse(t) ^@ reverse(lower(${bind(value)}::text))`);
    case 'wildcard':
      return anyTag(`t LIKE lower(${bind(wildcardToLike(String(value)))}::text) ESCAPE '\\'`);
    default:
      return FALSE;
  }
}

/**
 * Scopes are an enum array: values are matched by name without regard to case; a value
 * that names no scope matches nothing (so contains_all with one is false).
 */
function scopesCondition(column: string, condition: Condition, bind: Bind): string {
  const value = condition.value;
  const names = (Array.isArray(value) ? value : [value]).map((item) => String(item).toLowerCase());
  const known = [...new Set(names.filter((name) => SCOPE_NAMES.has(name)))];
  const anyScope = (test: string) => `EXISTS (SELECT 1 FROM unnest(${column}) s WHERE ${test})`;
  switch (condition.type) {
    case 'exists':
      return value === false ? `COALESCE(cardinality(${column}), 0) = 0` : `COALESCE(cardinality(${column}), 0) > 0`;
    case 'eq':
    case 'in':
    case 'contains_any':
      return known.length ? `(${column} && ${bind(known)}::scope[])` : FALSE;
    case 'contains_all':
      return known.length === new Set(names).size ? `(${column} @> ${bind(known)}::scope[])` : FALSE;
    case 'startswith':
      return anyScope(`s::text ^@ lower(${bind(value)}::text)`);
    case 'endswith':
      return anyScope(`reverse(s::text) ^@ reverse(lower(${bind(value)}::text))`);
    case 'wildcard':
      return anyScope(`s::text LIKE lower(${bind(wildcardToLike(String(value)))}::text) ESCAPE '\\'`);
    default:
      return FALSE;
  }
}

function dateCondition(column: string, condition: Condition, bind: Bind): string {
  switch (condition.type) {
    case 'exists':
      return condition.value === false ? FALSE : TRUE;
    case 'gte':
      return `${column} >= ${bind(timestamp(String(condition.value)))}::timestamptz`;
    case 'lte':
      return `${column} <= ${bind(timestamp(String(condition.value)))}::timestamptz`;
    default:
      return FALSE;
  }
}

/** One condition as a boolean SQL expression that is never NULL. Unknown fields or operators never hold. */
export function conditionSql(condition: Condition, bind: Bind): string {
  const field = Object.hasOwn(FIELD_SQL, condition.name) ? FIELD_SQL[condition.name] : undefined;
  const spec = Object.hasOwn(ASSET_FIELDS.fields, condition.name) ? ASSET_FIELDS.fields[condition.name] : undefined;
  if (!field || !spec?.operators.includes(condition.type)) return FALSE;
  switch (field.kind) {
    case 'text':
      return textCondition(field, condition, bind);
    case 'tags':
      return tagsCondition(field.column, condition, bind);
    case 'scopes':
      return scopesCondition(field.column, condition, bind);
    case 'date':
      return dateCondition(field.column, condition, bind);
  }
}

/**
 * Filters (validated against ASSET_FIELDS) as a WHERE fragment over `assets a`:
 * must (all), should (at least one, when not empty), must_not (none).
 */
export function filtersSql(filters: Filters | null | undefined, bind: Bind): string {
  if (!filters) return TRUE;
  const parts = [
    ...filters.must.map((condition) => conditionSql(condition, bind)),
    ...(filters.should.length ? [`(${filters.should.map((condition) => conditionSql(condition, bind)).join(' OR ')})`] : []),
    ...filters.must_not.map((condition) => `NOT COALESCE(${conditionSql(condition, bind)}, FALSE)`),
  ];
  return parts.length ? parts.join(' AND ') : TRUE;
}
