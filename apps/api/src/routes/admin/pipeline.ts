import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DELIVERY_STATUSES, messages, ValidationFailed } from '@notify/core';
import { listRuleDeliveries, ruleMatchCounts, type DeliveryRecord } from '@notify/db';
import { retryDelivery } from '@notify/pipeline';
import { resourcesOf, type AppDeps } from '../../deps';
import { applicationRef, gatewayRef, Nullable, StringEnum } from '../../schemas/common';

const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rule_id: Type.String({ format: 'uuid' }),
    team_member_uuid: Nullable(Type.String({ format: 'uuid' })),
    email: Type.String(),
    period: Type.String({ description: 'The delivery period (schedule period, instant send or burst window).' }),
    status: StringEnum(DELIVERY_STATUSES),
    event_count: Type.Integer(),
    attempts: Type.Integer(),
    message_id: Nullable(Type.String()),
    last_error: Nullable(Type.String()),
    added_date: Type.String({ format: 'date-time' }),
    last_update_date: Type.String({ format: 'date-time' }),
    sent_date: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'Delivery' },
);

export function deliveryJson(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    rule_id: delivery.ruleId,
    team_member_uuid: delivery.teamMemberId,
    email: delivery.email,
    period: delivery.periodKey,
    status: delivery.status,
    event_count: delivery.eventCount,
    attempts: delivery.attempts,
    message_id: delivery.messageId,
    last_error: delivery.lastError,
    added_date: delivery.createdAt.toISOString(),
    last_update_date: delivery.updatedAt.toISOString(),
    sent_date: delivery.sentAt?.toISOString() ?? null,
  };
}

/** Operator actions on the delivery pipeline: flush a rule, see its deliveries, retry a failed one. */
export const adminPipelineRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const resources = resourcesOf(deps);
  const config = { auth: 'admin' } as const;
  const security = [{ admin: [] }];
  const tags = ['Operators'];
  const RuleParams = Type.Object({ rule_id: Type.String() });

  app.post('/admin/v1/notification-rules/:rule_id/flush', {
    config,
    schema: {
      tags, security,
      summary: "Send a rule's pending matches now, as one digest per member",
      params: RuleParams,
      response: { 202: Type.Object({ matches: Type.Integer(), deliveries: Type.Integer() }), 401: gatewayRef, 404: applicationRef },
    },
  }, async (request, reply) => reply.code(202).send(await deps.pipeline.deliver.flush(request.params.rule_id)));

  app.get('/admin/v1/notification-rules/:rule_id/deliveries', {
    config,
    schema: {
      tags, security,
      summary: "A rule's recent deliveries and failures, newest first",
      params: RuleParams,
      querystring: Type.Object({
        // Query values are strings (bodies are not coerced, and neither are queries).
        limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: 'How many, 1 to 500. Default 50.' })),
        status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
      }),
      response: {
        200: Type.Object({
          pending_matches: Type.Integer(),
          silenced_matches: Type.Integer({ description: 'Matches silences held back: recorded, never e-mailed.' }),
          results: Type.Array(Delivery),
        }),
        400: applicationRef, 401: gatewayRef, 404: applicationRef,
      },
    },
  }, async (request) => {
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
    if (limit < 1 || limit > 500) throw new ValidationFailed([{ param: 'limit', details: [limit < 1 ? messages.min(1) : messages.max(500)] }]);
    const deliveries = await listRuleDeliveries(deps.db, request.params.rule_id, { limit, status: request.query.status });
    const matches = await ruleMatchCounts(deps.db, request.params.rule_id);
    return { pending_matches: matches.pending, silenced_matches: matches.silenced, results: deliveries.map(deliveryJson) };
  });

  app.post('/admin/v1/deliveries/:delivery_id/retry', {
    config,
    schema: {
      tags, security,
      summary: 'Send a failed or cancelled delivery again',
      params: Type.Object({ delivery_id: Type.String() }),
      response: { 202: Type.Object({ status: Type.Literal('pending') }), 401: gatewayRef, 404: applicationRef, 409: applicationRef },
    },
  }, async (request, reply) => {
    await retryDelivery(resources, request.params.delivery_id);
    return reply.code(202).send({ status: 'pending' as const });
  });
};
