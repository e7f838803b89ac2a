import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseRuleListQuery, type RawQuery } from '@notify/core';
import { deliveryCountsByRule, getOrganization, listRules } from '@notify/db';
import type { AppDeps } from '../../deps';
import { applicationRef, gatewayRef, QueryParam } from '../../schemas/common';

const count = Type.Integer({ minimum: 0 });

const OperatorRuleSummary = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    scope: Type.String(),
    frequency: Type.String(),
    enabled: Type.Boolean(),
    members: Type.Array(Type.Object({ team_member_uuid: Type.String({ format: 'uuid' }), email: Type.String() })),
    added_date: Type.String({ format: 'date-time' }),
    last_update_date: Type.String({ format: 'date-time' }),
    deliveries: Type.Object(
      { pending: count, sending: count, sent: count, failed: count, cancelled: count },
      { description: "How many of the rule's deliveries are in each status." },
    ),
  },
  { $id: 'OperatorRuleSummary' },
);

/**
 * An organization's notification rules as operators see them: what the customer's list shows,
 * plus delivery counts per status, so rules with failed e-mails stand out (the console's rule list).
 */
export const adminOrganizationRuleRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  app.get('/admin/v1/organizations/:org_id/notification-rules', {
    config: { auth: 'admin' },
    schema: {
      tags: ['Operators'],
      security: [{ admin: [] }],
      summary: "List an organization's notification rules, with delivery counts",
      description: 'Takes the query parameters of `GET /v1/platform/notification-rules` (paging, ordering, filters) with the same validation.',
      params: Type.Object({ org_id: Type.String() }),
      querystring: Type.Object({
        page: Type.Optional(QueryParam('Page number, 1 to 800. Default 1.')),
        page_size: Type.Optional(QueryParam('Rules per page, 25 to 100. Default 100.')),
        ordering: Type.Optional(QueryParam('As on the customer list. Default -added_date.', 'name')),
        name__contains: Type.Optional(QueryParam('Name contains this text (case-insensitive).')),
      }),
      response: {
        200: Type.Object({ result_count: count, results: Type.Array(OperatorRuleSummary) }),
        400: applicationRef, 401: gatewayRef, 404: applicationRef,
      },
    },
  }, async (request) => {
    const query = parseRuleListQuery(request.query as RawQuery);
    const org = await getOrganization(deps.db, request.params.org_id);
    const { total, rules } = await listRules(deps.db, org.id, query);
    const counts = await deliveryCountsByRule(deps.db, rules.map((rule) => rule.id));
    return {
      result_count: total,
      results: rules.map((rule) => ({
        id: rule.id,
        name: rule.name,
        scope: rule.scope,
        frequency: rule.frequency,
        enabled: rule.enabled,
        members: rule.members.map((member) => ({ team_member_uuid: member.teamMemberId, email: member.email })),
        added_date: rule.addedDate.toISOString(),
        last_update_date: rule.lastUpdateDate.toISOString(),
        deliveries: counts.get(rule.id) ?? { pending: 0, sending: 0, sent: 0, failed: 0, cancelled: 0 },
      })),
    };
  });
};
