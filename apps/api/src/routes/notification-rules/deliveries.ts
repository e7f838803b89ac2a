import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DELIVERY_KINDS, DELIVERY_LOG_LIMITS, DELIVERY_ORDERING_FIELDS, DELIVERY_STATUSES, parseDeliveryLogQuery, type RawQuery } from '@notify/core';
import { listDeliveryLog, type DeliveryLogItem } from '@notify/db';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps';
import { apiKeyErrorResponses, applicationRef, Nullable, QueryParam, StringEnum } from '../../schemas/common';
import { RULE_ROUTE, RuleIdParams } from './schemas';

const DeliveryLogEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The delivery; the e-mail\'s Message-ID is `<id@sender domain>`.' }),
    team_member_uuid: Nullable(Type.String({ format: 'uuid', description: 'null once the member was removed.' })),
    email: Type.String(),
    kind: StringEnum(DELIVERY_KINDS),
    period_start: Type.String({ format: 'date-time', description: 'When the first event it carries arrived.' }),
    period_end: Type.String({ format: 'date-time', description: 'When its period closed and the e-mail was made.' }),
    events: Type.Integer({ description: 'Events it carries (the e-mail lists up to 500, its counts cover all).' }),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer(),
    sent_at: Nullable(Type.String({ format: 'date-time' })),
    message_id: Nullable(Type.String({ description: 'The Message-ID of the e-mail, to find it in your mail system.' })),
    error: Nullable(Type.String({ description: 'The last failure: a short class and the SMTP reply code, e.g. "rejected: SMTP 550".' })),
  },
  { $id: 'NotificationDelivery' },
);

const DeliveryLog = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  result_count: Type.Integer({ description: 'Deliveries matching the filters, over all pages.' }),
  results: Type.Array(Type.Unsafe({ $ref: 'NotificationDelivery#' })),
});

const DeliveryLogQuerySchema = Type.Object({
  page: Type.Optional(QueryParam(`Page number, 1 to ${DELIVERY_LOG_LIMITS.maxPage}. Default 1.`)),
  page_size: Type.Optional(QueryParam(`Deliveries per page, ${DELIVERY_LOG_LIMITS.minPageSize} to ${DELIVERY_LOG_LIMITS.maxPageSize}. Default ${DELIVERY_LOG_LIMITS.defaultPageSize}.`)),
  status__in: Type.Optional(QueryParam(`Comma-separated: ${DELIVERY_STATUSES.join(', ')}.`, 'failed,suppressed')),
  kind__in: Type.Optional(QueryParam(`Comma-separated: ${DELIVERY_KINDS.join(', ')}.`, 'digest')),
  sent_at__gte: Type.Optional(QueryParam('ISO 8601 date-time lower bound (inclusive).', '2026-11-20T00:00:00Z')),
  sent_at__lte: Type.Optional(QueryParam('ISO 8601 date-time upper bound (inclusive).')),
  ordering: Type.Optional(QueryParam(`Comma-separated fields, each optionally prefixed with - for descending: ${DELIVERY_ORDERING_FIELDS.join(', ')}. Default -period_end.`, '-sent_at')),
});

function entryJson(item: DeliveryLogItem) {
  return {
    id: item.id,
    team_member_uuid: item.teamMemberId,
    email: item.email,
    kind: item.kind,
    period_start: item.periodStart.toISOString(),
    period_end: item.periodEnd.toISOString(),
    events: item.events,
    status: item.status,
    attempts: item.attempts,
    sent_at: item.sentAt?.toISOString() ?? null,
    message_id: item.messageId,
    error: item.error,
  };
}

/** The delivery log: every e-mail a rule sent or tried to, for its customer. */
export const ruleDeliveryRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  app.addSchema(DeliveryLogEntry);
  app.get('/v1/platform/notification-rules/:rule_id/deliveries', {
    config: RULE_ROUTE.config,
    schema: {
      tags: RULE_ROUTE.tags,
      security: RULE_ROUTE.security,
      summary: "A rule's e-mails: what it sent, to whom, when",
      description: 'One item per e-mail (one per member and period), newest first by default.',
      params: RuleIdParams,
      querystring: DeliveryLogQuerySchema,
      response: { 200: DeliveryLog, 404: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const query = parseDeliveryLogQuery(request.query as RawQuery);
    const { total, items } = await listDeliveryLog(deps.db, request.principal!.organizationId, request.params.rule_id, query);
    return { page: query.page, page_size: query.pageSize, result_count: total, results: items.map(entryJson) };
  });
};
