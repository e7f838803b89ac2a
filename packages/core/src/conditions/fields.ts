import type { Operator } from './types';
import { OPERATORS } from './types';

export type FieldKind = 'string' | 'string_array' | 'severity' | 'date' | 'any';

export interface FieldSpec {
  readonly kind: FieldKind;
  readonly operators: readonly Operator[];
}

/**
 * The fields a caller's filters may name. `prefixes` are open-ended families such
 * as `data.<key>`, whose keys cannot be listed up front.
 */
export interface FieldCatalog {
  readonly fields: Readonly<Record<string, FieldSpec>>;
  readonly prefixes?: Readonly<Record<string, FieldSpec>>;
}

/** Operators that make sense for each kind; a catalog may narrow them per field. */
export const KIND_OPERATORS: Readonly<Record<FieldKind, readonly Operator[]>> = Object.freeze({
  string: ['eq', 'in', 'startswith', 'endswith', 'wildcard', 'exists'],
  // Text operators on an array match when any element does, e.g. tags wildcard "prod-*".
  string_array: ['eq', 'in', 'startswith', 'endswith', 'wildcard', 'contains_any', 'contains_all', 'exists'],
  severity: ['eq', 'in', 'gte', 'lte', 'exists'],
  date: ['gte', 'lte', 'exists'],
  any: OPERATORS,
});

export function defineField(kind: FieldKind, operators: readonly Operator[] = KIND_OPERATORS[kind]): FieldSpec {
  return Object.freeze({ kind, operators: Object.freeze([...operators]) });
}

export const EVENT_FIELDS: FieldCatalog = Object.freeze({
  fields: Object.freeze({
    asset: defineField('string'),
    asset_type: defineField('string'),
    severity: defineField('severity'),
    tags: defineField('string_array'),
  }),
  prefixes: Object.freeze({ 'data.': defineField('any') }),
});

/** Silences speak the same language over the same fields, and the scope (a silence spans scopes). */
export const SILENCE_FIELDS: FieldCatalog = Object.freeze({
  fields: Object.freeze({ scope: defineField('string', ['eq', 'in']), ...EVENT_FIELDS.fields }),
  prefixes: EVENT_FIELDS.prefixes,
});

export const MAX_PREFIX_KEY_LENGTH = 128;
const PREFIX_KEY = /^[A-Za-z0-9_-]+$/;

export type FieldResolution = { ok: true; spec: FieldSpec; key?: string } | { ok: false; message: string };

export function fieldNames(catalog: FieldCatalog): string[] {
  const prefixed = Object.keys(catalog.prefixes ?? {}).map((prefix) => `${prefix}<key>`);
  return [...Object.keys(catalog.fields), ...prefixed];
}

export function resolveField(catalog: FieldCatalog, name: string): FieldResolution {
  // Own keys only, so names like "constructor" or "__proto__" never resolve to Object.prototype.
  if (Object.hasOwn(catalog.fields, name)) {
    const spec = catalog.fields[name];
    if (spec) return { ok: true, spec };
  }
  const prefixes = catalog.prefixes ?? {};
  for (const prefix of Object.keys(prefixes)) {
    const spec = prefixes[prefix];
    if (!spec || !name.startsWith(prefix)) continue;
    const key = name.slice(prefix.length);
    if (key.length > 0 && key.length <= MAX_PREFIX_KEY_LENGTH && PREFIX_KEY.test(key)) {
      return { ok: true, spec, key };
    }
    return {
      ok: false,
      message:
        `"${name}" is not a valid field. The key after "${prefix}" must be 1 to ${MAX_PREFIX_KEY_LENGTH} ` +
        'letters, digits, "_" or "-".',
    };
  }
  return { ok: false, message: `"${name}" is not a valid field. Use one of: ${fieldNames(catalog).join(', ')}.` };
}
