import { Type } from 'typebox';
import { OPERATORS } from '@notify/core';
import { StringEnum } from './common';

const Condition = Type.Object({
  name: Type.String({ description: 'asset, asset_type, tags, scopes, first_seen or last_seen', examples: ['asset'] }),
  type: StringEnum(OPERATORS),
  value: Type.Optional(Type.Unsafe<unknown>({ description: 'A string or a list of strings, as the operator requires; an ISO 8601 date-time for first_seen and last_seen.' })),
});

/** The documented shape of asset-search filters; validation is the `x-asset-filters` keyword's. */
export const AssetFiltersShape = Type.Object({
  must: Type.Optional(Type.Array(Condition, { description: 'Every condition holds.' })),
  should: Type.Optional(Type.Array(Condition, { description: 'At least one condition holds (when not empty).' })),
  must_not: Type.Optional(Type.Array(Condition, { description: 'No condition holds.' })),
});

export const ASSET_FILTERS_EXAMPLE = {
  must: [{ name: 'asset', type: 'wildcard', value: '*.example.com' }],
  should: [
    { name: 'tags', type: 'contains_any', value: ['production'] },
    { name: 'scopes', type: 'contains_any', value: ['new_open_port_detected'] },
  ],
  must_not: [{ name: 'last_seen', type: 'lte', value: '2026-01-01T00:00:00Z' }],
};
