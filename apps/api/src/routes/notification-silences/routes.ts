import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseSilenceListQuery, prepareNewSilence, SILENCE_FIELDS, silenceStatus, type RawQuery } from '@notify/core';
import { createSilence, expireSilence, getSilence, listSilences, type Silence } from '@notify/db';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps';
import { normalizedFilters } from '../../plugins/ajv-filters';
import { apiKeyErrorResponses, applicationRef, gatewayRef } from '../../schemas/common';
import { Silence as SilenceSchema, SilenceCreateBody, SilenceIdParams, SilenceList, SilenceListQuery } from './schemas';


function silenceJson(silence: Silence, now: Date) {
  return {
    id: silence.id,
    filters: silence.filters,
    rule_ids: silence.ruleIds,
    starts_at: silence.startsAt.toISOString(),
    ends_at: silence.endsAt.toISOString(),
    comment: silence.comment,
    status: silenceStatus(silence, now),
    silenced_count: silence.silencedCount,
    added_date: silence.addedDate.toISOString(),
    last_update_date: silence.lastUpdateDate.toISOString(),
  };
}

const config = { auth: 'apikey', group: 'platform' } as const;
const tags = ['Notification silences'];
const security = [{ apikey: [] }];

/**
 * Silences: time-bounded orders, in the condition language, that hold back the matches of the
 * events they cover. Every write is announced to the match stage, which reloads the
 * organization's silences within a second (and all of them every RULE_RESYNC_MS).
 */
export const notificationSilenceRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { db } = deps;
  app.addSchema(SilenceSchema);
  const organizationOf = (principal: { organizationId: string } | null) => principal!.organizationId;
  const now = () => new Date();
  const changed = (organizationId: string) =>
    deps.ruleChanges.announce({ silenceOrganizationIds: [organizationId] }).catch((error) => deps.logger.warn({ err: error }, 'could not announce a silence change'));

  app.post('/v1/platform/notification-silences', {
    config,
    schema: {
      tags, security,
      summary: 'Create a silence',
      description:
        'Matches of the events it covers, for the rules it applies to, are recorded as silenced and never e-mailed, not when the silence ends ' +
        'either. Takes effect within a second. An organization holds at most 1,000 silences that have not expired (403, code 10403).',
      body: SilenceCreateBody,
      response: { 201: SilenceSchema, ...apiKeyErrorResponses, 403: Type.Union([gatewayRef, applicationRef], { description: 'The plan lacks the platform group (gateway body), or the organization holds the most silences it may (code 10403).' }) },
    },
  }, async (request, reply) => {
    const at = now();
    const body = request.body as { filters: unknown; rule_ids?: string[] | null; starts_at?: string | null; ends_at: string; comment: string };
    const silence = await createSilence(db, organizationOf(request.principal), prepareNewSilence({ ...body, filters: normalizedFilters(body.filters, SILENCE_FIELDS) }, at), at);
    await changed(silence.organizationId);
    return reply.code(201).send(silenceJson(silence, at));
  });

  app.get('/v1/platform/notification-silences', {
    config,
    schema: {
      tags, security,
      summary: 'List silences',
      description: 'Latest first.',
      querystring: SilenceListQuery,
      response: { 200: SilenceList, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const query = parseSilenceListQuery(request.query as RawQuery);
    const at = now();
    const { total, silences } = await listSilences(db, organizationOf(request.principal), query, at);
    return { page: query.page, page_size: query.pageSize, result_count: total, results: silences.map((silence) => silenceJson(silence, at)) };
  });

  app.get('/v1/platform/notification-silences/:silence_id', {
    config,
    schema: {
      tags, security,
      summary: 'Get one silence',
      params: SilenceIdParams,
      response: { 200: SilenceSchema, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request) => silenceJson(await getSilence(db, organizationOf(request.principal), request.params.silence_id), now()));

  app.delete('/v1/platform/notification-silences/:silence_id', {
    config,
    schema: {
      tags, security,
      summary: 'End a silence now',
      description: 'It expires at once and stays listed, as expired. Matches it held back stay silenced.',
      params: SilenceIdParams,
      response: { 204: { type: 'null', description: 'Expired.' }, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request, reply) => {
    const silence = await expireSilence(db, organizationOf(request.principal), request.params.silence_id, now());
    await changed(silence.organizationId);
    return reply.code(204).send(null);
  });
};
