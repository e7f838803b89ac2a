import { DEFAULT_ASSET_SORT, type AssetSort, type Filters } from '@notify/core';
import { poolOf, type DatabaseHandle } from '../client';
import { filtersSql, type Bind } from './includes/asset-filters';

export interface AssetSearchQuery {
  /** Validated against ASSET_FIELDS; null or empty clauses: every asset. */
  filters: Filters | null;
  sort: readonly AssetSort[];
  page: number;
  pageSize: number;
}

/** What each sort field orders by: text without regard to case (the exact text breaks ties), a missing asset_type last. */
const SORT_COLUMNS: Record<AssetSort['field'], (direction: string) => string[]> = {
  asset: (direction) => [`a.asset_lower ${direction}`, `a.asset ${direction}`],
  asset_type: (direction) => [`lower(a.asset_type) ${direction} NULLS LAST`, `a.asset_type ${direction} NULLS LAST`],
  first_seen: (direction) => [`a.first_seen ${direction}`],
  last_seen: (direction) => [`a.last_seen ${direction}`],
};

export interface Statement {
  text: string;
  values: unknown[];
}

/** The search as one parameterized statement: the total of matches and one page of them. */
export function assetSearchStatement(organizationId: string, query: AssetSearchQuery): Statement {
  const values: unknown[] = [organizationId];
  const bind: Bind = (value) => `$${values.push(value)}`;
  const where = `a.organization_id = $1 AND ${filtersSql(query.filters, bind)}`;
  const sort = query.sort.length ? query.sort : DEFAULT_ASSET_SORT;
  const orderBy = [
    ...sort.flatMap((item) => SORT_COLUMNS[item.field](item.order === 'desc' ? 'DESC' : 'ASC')),
    // The asset is unique within the organization: pages never overlap or skip one.
    ...(sort.some((item) => item.field === 'asset') ? [] : SORT_COLUMNS.asset('ASC')),
  ].join(', ');
  const limit = bind(query.pageSize);
  const offset = bind((query.page - 1) * query.pageSize);
  const text = `
    WITH page AS (
      SELECT a.asset, a.asset_lower, a.asset_type, a.tags, a.scopes::text[] AS scopes, a.first_seen, a.last_seen
        FROM assets a WHERE ${where}
       ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
    )
    SELECT t.total, a.asset, a.asset_type, a.tags, a.scopes, a.first_seen, a.last_seen
      FROM (SELECT count(*) AS total FROM assets a WHERE ${where}) t
      LEFT JOIN page a ON true
     ORDER BY ${orderBy}`;
  return { text, values };
}

/** A row of readAssetPage: the total, and an asset of the page (null when the page is empty). */
export interface SearchRow {
  total: string;
  asset: string | null;
  asset_type: string | null;
  tags: string[] | null;
  scopes: string[] | null;
  first_seen: Date;
  last_seen: Date;
}

/** One page of an organization's assets that match the query, each row with the total of matches. */
export async function readAssetPage(db: DatabaseHandle, organizationId: string, query: AssetSearchQuery): Promise<SearchRow[]> {
  const { text, values } = assetSearchStatement(organizationId, query);
  const { rows } = await poolOf(db).query<SearchRow>(text, values);
  return rows;
}
