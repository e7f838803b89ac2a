import { Type } from 'typebox';
import { ASSET_SEARCH_LIMITS, ASSET_SORT_FIELDS, SCOPES } from '@notify/core';
import { ASSET_FILTERS_KEYWORD } from '../../plugins/ajv-filters';
import { ASSET_FILTERS_EXAMPLE } from '../../schemas/asset-filters';
import { Nullable, QueryParam, StringEnum } from '../../schemas/common';

const FILTERS_DESCRIPTION = `The condition language of rule strategies over the asset inventory:
\`must\` (all hold), \`should\` (at least one holds, when not empty), \`must_not\` (none holds).
Fields and their operators: \`asset\`, \`asset_type\` (eq, in, startswith, endswith, wildcard, exists);
\`tags\`, \`scopes\` (those, plus contains_any, contains_all: an operator holds when any element matches);
\`first_seen\`, \`last_seen\` (gte, lte with an ISO 8601 date-time, UTC when it has no offset; exists).
Text compares without regard to case. \`tags exists\` is false for an asset without tags.
Omitted, null or empty: every asset.`;

export const AssetSearchBody = Type.Object({
  filters: Type.Optional(Type.Unsafe<unknown>({ [ASSET_FILTERS_KEYWORD]: 'filters', description: FILTERS_DESCRIPTION, examples: [ASSET_FILTERS_EXAMPLE] })),
  sort: Type.Optional(
    Nullable(
      Type.Array(
        Type.Object({
          field: StringEnum(ASSET_SORT_FIELDS),
          order: Type.Optional(StringEnum(['asc', 'desc'] as const, { description: 'Default: asc.' })),
        }),
        {
          maxItems: ASSET_SEARCH_LIMITS.maxSortFields,
          description:
            'Sort keys in order of precedence. Default: last_seen descending. asset and asset_type sort without regard to case ' +
            '(assets without asset_type last); the asset breaks ties, so pages never overlap.',
          examples: [[{ field: 'last_seen', order: 'desc' }]],
        },
      ),
    ),
  ),
});

export const AssetSearchQuery = Type.Object({
  page: Type.Optional(QueryParam(`Page number, 1 to ${ASSET_SEARCH_LIMITS.maxPage}. Default 1.`)),
  page_size: Type.Optional(
    QueryParam(`Assets per page, ${ASSET_SEARCH_LIMITS.minPageSize} to ${ASSET_SEARCH_LIMITS.maxPageSize}. Default ${ASSET_SEARCH_LIMITS.defaultPageSize}.`),
  ),
});

export const AssetItem = Type.Object(
  {
    asset: Type.String({ examples: ['mail.example.com'] }),
    asset_type: Nullable(Type.String({ description: 'From the latest event that gave one.', examples: ['subdomain'] })),
    tags: Type.Array(Type.String(), { description: 'Every tag its events carried.' }),
    scopes: Type.Array(StringEnum(SCOPES), { description: 'Every kind of event seen on it.' }),
    first_seen: Type.String({ format: 'date-time', description: 'occurred_at of its earliest event.' }),
    last_seen: Type.String({ format: 'date-time', description: 'occurred_at of its latest event.' }),
  },
  { $id: 'Asset' },
);

export const AssetSearchResult = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  result_count: Type.Integer({ description: 'Number of assets matching the filters, over all pages.' }),
  results: Type.Array(Type.Unsafe({ $ref: 'Asset#' })),
});
