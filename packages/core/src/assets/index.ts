import { defineField, type FieldCatalog } from '../conditions';
import { mergeIssues, ValidationFailed, type FieldIssue } from '../errors';
import { messages } from '../messages';

/**
 * The fields of the asset inventory that asset-search filters may name (the condition
 * language of decisions §4 over a different catalog). Every field takes the operators
 * of its kind; strings compare without regard to case, as in rule strategies.
 */
export const ASSET_FIELDS: FieldCatalog = Object.freeze({
  fields: Object.freeze({
    asset: defineField('string'),
    asset_type: defineField('string'),
    tags: defineField('string_array'),
    scopes: defineField('string_array'),
    first_seen: defineField('date'),
    last_seen: defineField('date'),
  }),
});

export const ASSET_SORT_FIELDS = ['asset', 'asset_type', 'first_seen', 'last_seen'] as const;
export type AssetSortField = (typeof ASSET_SORT_FIELDS)[number];
export type SortOrder = 'asc' | 'desc';
export interface AssetSort {
  field: AssetSortField;
  order: SortOrder;
}

/** Most recently seen first; the asset breaks ties. */
export const DEFAULT_ASSET_SORT: readonly AssetSort[] = Object.freeze([{ field: 'last_seen', order: 'desc' }]);

/** Paging bounds of the search, the same as the rules list (spec, Limits). */
export const ASSET_SEARCH_LIMITS = { maxPage: 800, minPageSize: 25, maxPageSize: 100, defaultPageSize: 100, maxSortFields: 4 } as const;

export interface Paging {
  page: number;
  pageSize: number;
}

/** Reads `page` and `page_size` from a query string (the last value wins); throws ValidationFailed. */
export function parsePaging(raw: Record<string, string | string[] | undefined>, limits = ASSET_SEARCH_LIMITS): Paging {
  const issues: FieldIssue[] = [];
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const values = raw[name];
    const value = Array.isArray(values) ? values[values.length - 1] : values;
    if (value === undefined || value.trim() === '') return fallback;
    if (!/^\s*[+-]?\d+\s*$/.test(value)) {
      issues.push({ param: name, details: [messages.integer] });
      return fallback;
    }
    const parsed = Number(value);
    if (parsed < min) issues.push({ param: name, details: [messages.min(min)] });
    else if (parsed > max) issues.push({ param: name, details: [messages.max(max)] });
    return parsed;
  };
  const paging = {
    page: integer('page', 1, 1, limits.maxPage),
    pageSize: integer('page_size', limits.defaultPageSize, limits.minPageSize, limits.maxPageSize),
  };
  if (issues.length) throw new ValidationFailed(mergeIssues(issues));
  return paging;
}

/** The sort to apply: the requested fields in order, each once (the first mention wins), or the default. */
export function normalizeAssetSort(sort: ReadonlyArray<{ field: AssetSortField; order?: SortOrder }> | undefined): AssetSort[] {
  if (!sort || sort.length === 0) return DEFAULT_ASSET_SORT.map((item) => ({ ...item }));
  const seen = new Set<AssetSortField>();
  const result: AssetSort[] = [];
  for (const item of sort) {
    if (seen.has(item.field)) continue;
    seen.add(item.field);
    result.push({ field: item.field, order: item.order ?? 'asc' });
  }
  return result;
}
