import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ASSET_FIELDS, normalizeAssetSort, parsePaging, type RawQuery } from '@notify/core';
import { searchAssets, type AssetRecord } from '@notify/db';
import type { AppDeps } from '../../deps';
import { normalizedFilters } from '../../plugins/ajv-filters';
import { apiKeyErrorResponses } from '../../schemas/common';
import { AssetItem, AssetSearchBody, AssetSearchQuery, AssetSearchResult } from './schemas';

function assetJson(asset: AssetRecord) {
  return {
    asset: asset.asset,
    asset_type: asset.assetType,
    tags: asset.tags,
    scopes: asset.scopes,
    first_seen: asset.firstSeen.toISOString(),
    last_seen: asset.lastSeen.toISOString(),
  };
}


const DESCRIPTION = `Searches the organization's asset inventory: every asset an ingested event named, with its
type, tags, the scopes (kinds of event) seen on it and when it was first and last seen (the events'
occurred_at). The filters use the condition language of rule strategies; an empty body returns every
asset. The answer is a page of the list envelope of the notification-rules list.`;

export const assetSearchRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  app.addSchema(AssetItem);

  app.post('/v1/easm/assets/search', {
    config: { auth: 'apikey', group: 'easm' },
    schema: {
      tags: ['EASM'],
      security: [{ apikey: [] }],
      summary: 'Search assets',
      description: DESCRIPTION,
      querystring: AssetSearchQuery,
      body: AssetSearchBody,
      response: { 200: AssetSearchResult, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const { page, pageSize } = parsePaging(request.query as RawQuery);
    const filters = normalizedFilters(request.body.filters, ASSET_FIELDS);
    const sort = normalizeAssetSort(request.body.sort ?? undefined);
    const { total, assets } = await searchAssets(deps.db, request.principal!.organizationId, { filters, sort, page, pageSize });
    return { page, page_size: pageSize, result_count: total, results: assets.map(assetJson) };
  });
};
