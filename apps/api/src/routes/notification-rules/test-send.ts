import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getRule } from '@notify/db';
import { sendTestEmails, testSendRecipients } from '@notify/pipeline';
import { redisKeys } from '@notify/queues';
import { Type } from 'typebox';
import { type AppDeps } from '../../deps';
import { ApplicationError } from '../../errors/catalog';
import { apiKeyErrorResponses, applicationRef, gatewayRef } from '../../schemas/common';
import { RULE_ROUTE, RuleIdParams } from './schemas';

/** Test sends a rule may have in one minute. */
export const TEST_SENDS_PER_MINUTE = 5;
const WINDOW_MS = 60_000;

const TestSendBody = Type.Object({
  members: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), {
    minItems: 1,
    maxItems: 500,
    description: "Team-member UUIDs among the rule's subscribed members. Omitted: every subscribed member of the rule.",
  })),
});

const TestSendAnswer = Type.Object({
  deliveries: Type.Array(Type.Object({
    id: Type.String({ format: 'uuid', description: 'The delivery: it appears in the delivery log with kind "test".' }),
    team_member_uuid: Type.String({ format: 'uuid' }),
    email: Type.String(),
    status: Type.Literal('pending'),
  })),
});

/** POST /v1/platform/notification-rules/{rule_id}/test: one e-mail now to each member asked for. */
export const ruleTestSendRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const keys = redisKeys(deps.config.queuePrefix);
  const testSends = { db: deps.db, now: deps.now, toSend: deps.pipeline.deliver.toSend };

  /** Counts a test send of the rule in its one-minute window; throws the 429 beyond the limit. */
  async function spendTestSend(ruleId: string): Promise<void> {
    const key = keys.testSends(ruleId);
    // The window starts with its first send and ends with the key; INCR keeps the expiry.
    const [, [, count], [, left]] = (await deps.redis.multi().set(key, 0, 'PX', WINDOW_MS, 'NX').incr(key).pttl(key).exec()) as [unknown, [unknown, number], [unknown, number]];
    if (count > TEST_SENDS_PER_MINUTE) throw new ApplicationError('tooManyTestSends', undefined, { 'retry-after': Math.max(1, Math.ceil(left / 1000)) });
  }

  app.post('/v1/platform/notification-rules/:rule_id/test', {
    config: RULE_ROUTE.config,
    schema: {
      tags: RULE_ROUTE.tags,
      security: RULE_ROUTE.security,
      summary: 'Send a test e-mail of a rule now',
      description:
        "Each member asked for (default: every subscribed member of the rule) gets one e-mail now, its subject starting `[Test]`, built from the rule's " +
        'latest matching event stored in the last 90 days or, when there is none, a sample event of its scope, labelled as such. ' +
        `At most ${TEST_SENDS_PER_MINUTE} test sends per rule per minute (429, code 10429, with Retry-After). A test send is not one of the rule's periods: ` +
        'its next e-mails go out as they would have.',
      params: RuleIdParams,
      body: Type.Optional(TestSendBody),
      response: {
        202: TestSendAnswer, 404: applicationRef, ...apiKeyErrorResponses,
        429: Type.Union([gatewayRef, applicationRef], { description: 'The API rate limit or quota (gateway body), or the test sends of the minute are spent (code 10429).' }),
      },
    },
  }, async (request, reply) => {
    const rule = await getRule(deps.db, request.principal!.organizationId, request.params.rule_id);
    // A refused request spends nothing of the minute's test sends.
    const members = testSendRecipients(rule, request.body?.members);
    await spendTestSend(rule.id);
    const deliveries = await sendTestEmails(testSends, rule, members);
    return reply.code(202).send({
      deliveries: deliveries.map((delivery) => ({ id: delivery.id, team_member_uuid: delivery.team_member_id, email: delivery.email, status: delivery.status })),
    });
  });
};
