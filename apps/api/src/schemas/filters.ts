import { Type } from 'typebox';
import { OPERATORS } from '@notify/core';
import { Nullable, StringEnum } from './common';

const Condition = Type.Object({
  name: Type.String({ description: 'asset, asset_type, severity, tags, or data.<key>', examples: ['severity'] }),
  type: StringEnum(OPERATORS),
  value: Type.Optional(Type.Unsafe<unknown>({ description: 'A string, number, boolean or list, as the operator requires.' })),
});

/** The documented shape of the condition language (product decisions §4). */
export const FiltersShape = Type.Object({
  must: Type.Optional(Type.Array(Condition, { description: 'Every condition holds.' })),
  should: Type.Optional(Type.Array(Condition, { description: 'At least one condition holds (when not empty).' })),
  must_not: Type.Optional(Type.Array(Condition, { description: 'No condition holds.' })),
});

export const FILTERS_EXAMPLE = {
  must: [{ name: 'severity', type: 'in', value: ['high', 'critical'] }],
  should: [
    { name: 'asset', type: 'wildcard', value: '*.example.com' },
    { name: 'tags', type: 'contains_any', value: ['production'] },
  ],
  must_not: [{ name: 'tags', type: 'contains_any', value: ['test'] }],
};

/**
 * A field in the condition language. Validation is the domain validator's alone
 * (the `x-filters` keyword), so each problem is reported once at its exact path;
 * the OpenAPI document shows FiltersShape in its place.
 */
export function Filters(root: string, description: string) {
  return Type.Unsafe<unknown>({ 'x-filters': root, description, examples: [FILTERS_EXAMPLE] });
}

/** What responses carry: the stored, normalized strategy. */
export const StoredFilters = Nullable(
  Type.Object({
    must: Type.Array(Condition),
    should: Type.Array(Condition),
    must_not: Type.Array(Condition),
  }),
);
