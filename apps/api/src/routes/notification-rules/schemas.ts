import { Type } from 'typebox';
import { FREQUENCIES, RENOTIFY_LIMITS, RULE_LIST_LIMITS, RULE_ORDERING_FIELDS, SCOPES } from '@notify/core';
import { Immutable, Nullable, QueryParam, StringEnum } from '../../schemas/common';
import { Filters, StoredFilters } from '../../schemas/filters';

const name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: 'Length 1 to 255.' });
const scope = StringEnum(SCOPES, { description: 'The kind of event the rule watches. Fixed at creation.' });
const frequency = StringEnum(FREQUENCIES, { description: 'How often matches are delivered. Default: instant.' });
const deliveryHour = Nullable(Type.Integer({ minimum: 0, maximum: 23, description: "Hour of delivery in the organization's time zone. Default 9 for daily, weekly and monthly; null for instant and hourly." }));
const deliveryDayOfWeek = Nullable(Type.Integer({ minimum: 0, maximum: 6, description: '0 = Monday … 6 = Sunday. Default 0 for weekly.' }));
const renotifyAfterHours = Nullable(Type.Integer({
  minimum: RENOTIFY_LIMITS.min,
  maximum: RENOTIFY_LIMITS.max,
  description:
    'One e-mail per finding: a match whose finding (the event\'s fingerprint) this rule e-mailed, or holds pending, within this many hours ' +
    'is a repeat and is not e-mailed; after that the finding is news again. 1 to 8,760, or null (the default): every match is e-mailed.',
}));
const members = Type.Array(Type.String({ format: 'uuid' }), {
  minItems: 1,
  maxItems: 500,
  description: 'Team-member UUIDs of your organization; duplicates collapse.',
});

export const RuleCreateBody = Type.Object({
  name,
  scope,
  strategy: Type.Optional(Filters('strategy', 'Conditions that narrow the events (the condition language). Fixed at creation. Null or omitted: every event of the scope.')),
  frequency: Type.Optional(frequency),
  delivery_hour: Type.Optional(deliveryHour),
  delivery_day_of_week: Type.Optional(deliveryDayOfWeek),
  members,
  enabled: Type.Optional(Type.Boolean({ description: 'Default: true.' })),
  renotify_after_hours: Type.Optional(renotifyAfterHours),
});

/** A rule to preview: as for create, the name optional. */
export const RulePreviewBody = Type.Object({ ...RuleCreateBody.properties, name: Type.Optional(name) });

export const RuleUpdateBody = Type.Object({
  name,
  members,
  enabled: Type.Boolean(),
  frequency: Type.Optional(frequency),
  delivery_hour: Type.Optional(deliveryHour),
  delivery_day_of_week: Type.Optional(deliveryDayOfWeek),
  renotify_after_hours: Type.Optional(renotifyAfterHours),
  scope: Immutable('Cannot be changed: create a new rule instead.'),
  strategy: Immutable('Cannot be changed: create a new rule instead.'),
});

const MemberRef = Type.Object({
  team_member_uuid: Type.String({ format: 'uuid' }),
  email: Type.String(),
  subscribed: Type.Boolean({ description: "False once the member opted out of this rule through an e-mail's unsubscribe link: they get no e-mail from it." }),
});

const summaryFields = {
  id: Type.String({ description: 'Identifier of the rule, assigned by the service.' }),
  name: Type.String(),
  scope,
  frequency,
  delivery_hour: deliveryHour,
  delivery_day_of_week: deliveryDayOfWeek,
  members: Type.Array(MemberRef),
  enabled: Type.Boolean(),
  renotify_after_hours: renotifyAfterHours,
  added_date: Type.String({ format: 'date-time' }),
  last_update_date: Type.String({ format: 'date-time' }),
};

export const RuleSummary = Type.Object(summaryFields, { $id: 'NotificationRuleSummary' });

export const Rule = Type.Object(
  {
    id: summaryFields.id,
    name: summaryFields.name,
    scope: summaryFields.scope,
    strategy: StoredFilters,
    frequency: summaryFields.frequency,
    delivery_hour: summaryFields.delivery_hour,
    delivery_day_of_week: summaryFields.delivery_day_of_week,
    members: summaryFields.members,
    enabled: summaryFields.enabled,
    renotify_after_hours: summaryFields.renotify_after_hours,
    added_date: summaryFields.added_date,
    last_update_date: summaryFields.last_update_date,
  },
  { $id: 'NotificationRule' },
);

export const RuleList = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  result_count: Type.Integer({ description: 'Number of rules matching the filters, over all pages.' }),
  results: Type.Array(Type.Unsafe({ $ref: 'NotificationRuleSummary#' })),
});

/** What every notification-rule route shares: the platform group's API key, and its OpenAPI tag and security. */
export const RULE_ROUTE = {
  config: { auth: 'apikey', group: 'platform' } as const,
  tags: ['Notification rules'],
  security: [{ apikey: [] }],
};

export const RuleIdParams = Type.Object({ rule_id: Type.String({ description: 'The rule identifier.' }) });

export const RuleListQuery = Type.Object({
  page: Type.Optional(QueryParam(`Page number, 1 to ${RULE_LIST_LIMITS.maxPage}. Default 1.`)),
  page_size: Type.Optional(QueryParam(`Rules per page, ${RULE_LIST_LIMITS.minPageSize} to ${RULE_LIST_LIMITS.maxPageSize}. Default ${RULE_LIST_LIMITS.defaultPageSize}.`)),
  ordering: Type.Optional(QueryParam(`Comma-separated fields, each optionally prefixed with - for descending: ${RULE_ORDERING_FIELDS.join(', ')}. Default -added_date. name sorts case-insensitively, scope and frequency alphabetically; ties end in a stable order.`, '-added_date,name')),
  name__contains: Type.Optional(QueryParam('Name contains this text (case-insensitive).')),
  name__not_contains: Type.Optional(QueryParam('Name does not contain this text (case-insensitive).')),
  scope__in: Type.Optional(QueryParam('Comma-separated scopes (or repeat the parameter).', 'new_open_port_detected,asset_ssl_changed')),
  scope__nin: Type.Optional(QueryParam('Comma-separated scopes to exclude.')),
  frequency__in: Type.Optional(QueryParam('Comma-separated frequencies.', 'daily,weekly')),
  frequency__nin: Type.Optional(QueryParam('Comma-separated frequencies to exclude.')),
  members__in: Type.Optional(QueryParam('Comma-separated team-member UUIDs: rules that notify any of them.')),
  members__nin: Type.Optional(QueryParam('Comma-separated team-member UUIDs: rules that notify none of them.')),
  enabled: Type.Optional(QueryParam('true, false, 1 or 0 (case-insensitive).')),
  added_date__lte: Type.Optional(QueryParam('ISO 8601 date-time upper bound (inclusive).', '2026-11-20T10:15:00Z')),
  added_date__gte: Type.Optional(QueryParam('ISO 8601 date-time lower bound (inclusive).')),
  last_update_date__lte: Type.Optional(QueryParam('ISO 8601 date-time upper bound (inclusive).')),
  last_update_date__gte: Type.Optional(QueryParam('ISO 8601 date-time lower bound (inclusive).')),
});
