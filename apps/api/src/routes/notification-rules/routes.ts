import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseRuleListQuery, validateFilters, type Filters, type RawQuery } from '@notify/core';
import { createRule, deleteRule, getRule, listRules, updateRule, type Rule, type RuleSummary } from '@notify/db';
import type { AppDeps } from '../../deps';
import { Type } from 'typebox';
import { apiKeyErrorResponses, applicationRef, gatewayRef } from '../../schemas/common';
import { Rule as RuleSchema, RULE_ROUTE, RuleCreateBody, RuleSummary as RuleSummarySchema, RuleIdParams, RuleList, RuleListQuery, RuleUpdateBody } from './schemas';

function summaryJson(rule: RuleSummary) {
  return {
    id: rule.id,
    name: rule.name,
    scope: rule.scope,
    frequency: rule.frequency,
    delivery_hour: rule.deliveryHour,
    delivery_day_of_week: rule.deliveryDayOfWeek,
    members: rule.members.map((member) => ({ team_member_uuid: member.teamMemberId, email: member.email, subscribed: member.subscribed })),
    enabled: rule.enabled,
    renotify_after_hours: rule.renotifyAfterHours,
    added_date: rule.addedDate.toISOString(),
    last_update_date: rule.lastUpdateDate.toISOString(),
  };
}

function ruleJson(rule: Rule) {
  return { ...summaryJson(rule), strategy: rule.strategy };
}

export function normalizedStrategy(strategy: unknown): Filters | null {
  if (strategy === undefined || strategy === null) return null;
  const result = validateFilters(strategy);
  // The x-filters schema keyword has already refused anything invalid.
  return result.ok ? result.value : null;
}

const { config, tags, security } = RULE_ROUTE;

export const notificationRuleRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { db } = deps;
  app.addSchema(RuleSummarySchema);
  const organizationOf = (principal: { organizationId: string } | null) => principal!.organizationId;
  const listCache = deps.ruleListCache;
  // After every write: list pages of the organization are stale, and the match stage's rule
  // index must reload the rule. It also resynchronises periodically and list pages
  // expire, so a lost announcement only delays the change.
  const changed = async (organizationId: string, ruleId: string) => {
    await Promise.all([
      listCache.invalidate(organizationId).catch((error) => deps.logger.warn({ err: error }, 'could not invalidate rule lists')),
      deps.ruleChanges.announce({ ruleIds: [ruleId] }).catch((error) => deps.logger.warn({ err: error }, 'could not announce a rule change')),
    ]);
  };

  app.post('/v1/platform/notification-rules', {
    config: { ...config, deferRequired: ['members'] },
    schema: {
      tags, security,
      summary: 'Create a notification rule',
      description: "An organization holds at most its plan's `max_rules` rules (default 1000): one more is a 403 with code 10403.",
      body: RuleCreateBody,
      response: { 201: RuleSchema, ...apiKeyErrorResponses, 403: Type.Union([gatewayRef, applicationRef], { description: 'The plan lacks the platform group (gateway body), or its max_rules is reached (code 10403).' }) },
    },
  }, async (request, reply) => {
    const body = request.body;
    const rule = await createRule(db, organizationOf(request.principal), {
      ...body,
      name: body.name.trim(),
      strategy: normalizedStrategy(body.strategy),
    });
    await changed(rule.organizationId, rule.id);
    return reply.code(201).send(ruleJson(rule));
  });

  app.put('/v1/platform/notification-rules/:rule_id', {
    config: { ...config, deferRequired: ['enabled'] },
    schema: {
      tags, security,
      summary: 'Update a notification rule',
      description: 'Replaces name, members and enabled; delivery fields and frequency that are omitted keep their value. scope and strategy cannot be changed.',
      params: RuleIdParams,
      body: RuleUpdateBody,
      response: { 200: RuleSchema, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const { scope: _scope, strategy: _strategy, ...body } = request.body;
    const rule = await updateRule(db, organizationOf(request.principal), request.params.rule_id, { ...body, name: body.name.trim() });
    await changed(rule.organizationId, rule.id);
    return ruleJson(rule);
  });

  app.get('/v1/platform/notification-rules', {
    config,
    schema: {
      tags, security,
      summary: 'List notification rules',
      querystring: RuleListQuery,
      response: { 200: RuleList, ...apiKeyErrorResponses },
    },
  }, async (request, reply) => {
    const query = parseRuleListQuery(request.query as RawQuery);
    const organizationId = organizationOf(request.principal);
    const cacheKey = JSON.stringify(query);
    // The version is read before the database, so a page computed while a write
    // lands is stored under the old version and never served after it.
    const version = await listCache.version(organizationId);
    const cached = version === undefined ? undefined : listCache.get(organizationId, cacheKey, version);
    if (cached !== undefined) return reply.type('application/json; charset=utf-8').send(cached);
    const { total, rules } = await listRules(db, organizationId, query);
    const body = String(reply.serialize({ page: query.page, page_size: query.pageSize, result_count: total, results: rules.map(summaryJson) }));
    if (version !== undefined) listCache.set(organizationId, cacheKey, version, body);
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get('/v1/platform/notification-rules/:rule_id', {
    config,
    schema: {
      tags, security,
      summary: 'Get one notification rule',
      params: RuleIdParams,
      response: { 200: RuleSchema, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request) => ruleJson(await getRule(db, organizationOf(request.principal), request.params.rule_id)));

  app.delete('/v1/platform/notification-rules/:rule_id', {
    config,
    schema: {
      tags, security,
      summary: 'Delete a notification rule',
      description: 'Its pending matches are dropped: nothing more is sent for it.',
      params: RuleIdParams,
      response: { 204: { type: 'null', description: 'Deleted.' }, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request, reply) => {
    await deleteRule(db, organizationOf(request.principal), request.params.rule_id);
    await changed(organizationOf(request.principal), request.params.rule_id);
    return reply.code(204).send(null);
  });
};
