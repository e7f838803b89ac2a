import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { messages, parsePreviewQuery, prepareNewRule, PREVIEW_DAYS, ValidationFailed, type RawQuery } from '@notify/core';
import { getOrganization, membersAmong } from '@notify/db';
import { lazyMailRenderer, previewRule } from '@notify/pipeline';
import { Type } from 'typebox';
import { type AppDeps } from '../../deps';
import { apiKeyErrorResponses, Nullable, QueryParam } from '../../schemas/common';
import { normalizedStrategy } from './routes';
import { RULE_ROUTE, RulePreviewBody } from './schemas';

const RulePreview = Type.Object({
  from: Type.String({ format: 'date-time', description: 'The oldest arrival replayed.' }),
  to: Type.String({ format: 'date-time', description: 'Now.' }),
  matched_events: Type.Integer({ description: 'Stored events of the scope the strategy matches.' }),
  emails: Type.Integer({ description: 'E-mails its frequency would have sent each member (repeats of renotify_after_hours left out).' }),
  members: Type.Array(Type.Object({ team_member_uuid: Type.String({ format: 'uuid' }), email: Type.String(), emails: Type.Integer() })),
  sample: Nullable(Type.Object(
    { subject: Type.String(), text: Type.String(), html: Type.String() },
    { description: 'The last e-mail it would have sent, as its first member would have got it; null when it would have sent none.' },
  )),
});

/** POST /v1/platform/notification-rules/preview: what a rule would have sent, nothing stored or sent. */
export const rulePreviewRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const ctx = { db: deps.db, now: deps.now, instantCoalesceMs: deps.config.pipeline.instantCoalesceMs, renderer: lazyMailRenderer() };

  app.post('/v1/platform/notification-rules/preview', {
    config: { ...RULE_ROUTE.config, deferRequired: ['members'] },
    schema: {
      tags: RULE_ROUTE.tags,
      security: RULE_ROUTE.security,
      summary: 'Preview a rule: what it would have sent',
      description:
        'A body as for create (`name` optional), validated the same way; nothing is stored or sent. The rule replays the organization\'s events ' +
        `stored in the last \`days\` (${PREVIEW_DAYS.min} to ${PREVIEW_DAYS.max}, default ${PREVIEW_DAYS.default}): its strategy on every event of its scope, then its frequency ` +
        '(and renotify_after_hours) on the matches, as the pipeline would have delivered them. Silences are not applied.',
      querystring: Type.Object({ days: Type.Optional(QueryParam(`Days of stored events to replay, ${PREVIEW_DAYS.min} to ${PREVIEW_DAYS.max}. Default ${PREVIEW_DAYS.default}.`, '7')) }),
      body: RulePreviewBody,
      response: { 200: RulePreview, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const { days } = parsePreviewQuery(request.query as RawQuery);
    const organizationId = request.principal!.organizationId;
    const body = request.body;
    const rule = prepareNewRule({ ...body, name: body.name?.trim() || 'Preview', strategy: normalizedStrategy(body.strategy) });
    const [organization, { found: members, unknown }] = await Promise.all([getOrganization(deps.db, organizationId), membersAmong(deps.db, organizationId, rule.memberIds)]);
    if (unknown.length) throw new ValidationFailed([{ param: 'members', details: unknown.map((id) => messages.unknownMember(id)) }]);
    const preview = await previewRule(ctx, organization, { ...rule, members: members.map((m) => ({ id: m.id, email: m.email, name: m.name })) }, days);
    return {
      from: preview.from.toISOString(),
      to: preview.to.toISOString(),
      matched_events: preview.matchedEvents,
      emails: preview.emails,
      members: members.map((member) => ({ team_member_uuid: member.id, email: member.email, emails: preview.emails })),
      sample: preview.sample,
    };
  });
};
