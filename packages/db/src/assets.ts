/**
 * The asset inventory (table `assets`): every asset an ingested event named, per organization,
 * with its type, tags, the scopes seen on it and when it was first and last seen. Ingest records
 * it in the statement that stores the events (sql/store-events.ts); the EASM asset search reads it
 * (searchAssets). A thin front over sql/ (sql style): the search compiles the condition language
 * to SQL (sql/includes/asset-filters), which Prisma cannot express.
 */
import type { Scope } from '@notify/core';
import type { Database } from './client';
import { readAssetPage, type AssetSearchQuery } from './sql/read-asset-page';

export { conditionSql, filtersSql, wildcardToLike, type Bind } from './sql/includes/asset-filters';
export { assetSearchStatement, type AssetSearchQuery, type Statement } from './sql/read-asset-page';

export interface AssetRecord {
  asset: string;
  assetType: string | null;
  tags: string[];
  scopes: Scope[];
  firstSeen: Date;
  lastSeen: Date;
}

/** One page of an organization's assets that match the filters, and how many match in all. */
export async function searchAssets(db: Database, organizationId: string, query: AssetSearchQuery): Promise<{ total: number; assets: AssetRecord[] }> {
  const rows = await readAssetPage(db, organizationId, query);
  return {
    total: Number(rows[0]?.total ?? 0),
    assets: rows
      .filter((row) => row.asset !== null)
      .map((row) => ({
        asset: row.asset!,
        assetType: row.asset_type,
        tags: row.tags ?? [],
        scopes: (row.scopes ?? []) as Scope[],
        firstSeen: row.first_seen,
        lastSeen: row.last_seen,
      })),
  };
}
