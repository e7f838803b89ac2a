import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseRuleListQuery, validateFilters, type Filters, type RawQuery } from '@notify/core';
import { createRule, deleteRule, getRule, listRules, updateRule, type Rule, type RuleSummary } from '@notify/db';
import type { AppDeps } from '../../deps';
import { apiKeyErrorResponses, applicationRef } from '../../schemas/common';
import { Rule as RuleSchema, RuleCreateBody, RuleSummary as RuleSummarySchema, RuleIdParams, RuleList, RuleListQuery, RuleUpdateBody } from './schemas';

function summaryJson(rule: RuleSummary) {
  return {
    id: rule.id,
    name: rule.name,
    scope: rule.scope,
    frequency: rule.frequency,
    delivery_hour: rule.deliveryHour,
    delivery_day_of_week: rule.deliveryDayOfWeek,
    members: rule.members.map((member) => ({ team_member_uuid: member.teamMemberId, email: member.email })),
    enabled: rule.enabled,
    added_date: rule.addedDate.toISOString(),
    last_update_date: rule.lastUpdateDate.toISOString(),
  };
}

function ruleJson(rule: Rule) {
  return { ...summaryJson(rule), strategy: rule.strategy };
}

function normalizedStrategy(strategy: unknown): Filters | null {
  if (strategy === undefined || strategy === null) return null;
  const result = validateFilters(strategy);
  // The x-filters schema keyword has already refused anything invalid.
  return result.ok ? result.value : null;
}

const config = { auth: 'apikey', group: 'platform' } as const;
const tags = ['Notification rules'];
const security = [{ apikey: [] }];

export const notificationRuleRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { db } = deps;
  app.addSchema(RuleSummarySchema);
  const organizationOf = (principal: { organizationId: string } | null) => principal!.organizationId;
  // Matchers also resynchronise periodically, so a lost announcement only delays the change.
  const announce = (ruleId: string) =>
    deps.ruleChanges.announce({ ruleIds: [ruleId] }).catch((error) => deps.logger.warn({ err: error }, 'could not announce a rule change'));

  app.post('/v1/platform/notification-rules', {
    config: { ...config, deferRequired: ['members'] },
    schema: {
      tags, security,
      summary: 'Create a notification rule',
      body: RuleCreateBody,
      response: { 201: RuleSchema, ...apiKeyErrorResponses },
    },
  }, async (request, reply) => {
    const body = request.body;
    const rule = await createRule(db, organizationOf(request.principal), {
      ...body,
      name: body.name.trim(),
      strategy: normalizedStrategy(body.strategy),
    });
    await announce(rule.id);
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
    await announce(rule.id);
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
  }, async (request) => {
    const query = parseRuleListQuery(request.query as RawQuery);
    const { total, rules } = await listRules(db, organizationOf(request.principal), query);
    return { page: query.page, page_size: query.pageSize, result_count: total, results: rules.map(summaryJson) };
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
    await announce(request.params.rule_id);
    return reply.code(204).send(null);
  });
};
