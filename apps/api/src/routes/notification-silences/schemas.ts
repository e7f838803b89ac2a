import { Type } from 'typebox';
import { SILENCE_LIMITS, SILENCE_STATUSES } from '@notify/core';
import { Nullable, QueryParam, StringEnum } from '../../schemas/common';
import { StoredFilters } from '../../schemas/filters';
import { SILENCE_FILTERS_KEYWORD } from '../../plugins/ajv-filters';

const FILTERS_DESCRIPTION =
  'The events it silences, in the condition language of strategies, over the same fields and `scope` ' +
  '(`eq` or `in`). At least one condition.';

const dateTime = (description: string) => Type.String({ maxLength: 64, description, examples: ['2026-12-01T08:00:00Z'] });

export const SilenceCreateBody = Type.Object({
  filters: Type.Unsafe<unknown>({ [SILENCE_FILTERS_KEYWORD]: 'filters', description: FILTERS_DESCRIPTION, examples: [{ must: [{ name: 'asset', type: 'eq', value: 'db1.example.com' }] }] }),
  rule_ids: Type.Optional(
    Nullable(Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: SILENCE_LIMITS.maxRuleIds,
      description: "The organization's rules it applies to. Omitted or null: every rule of the organization.",
    })),
  ),
  starts_at: Type.Optional(Nullable(dateTime('ISO 8601 date-time it starts at. Default: now.'))),
  ends_at: dateTime('ISO 8601 date-time it ends at: after starts_at, in the future, at most one year ahead.'),
  comment: Type.String({ minLength: 1, maxLength: SILENCE_LIMITS.maxCommentLength, description: 'Who and why: 1 to 1,000 characters.' }),
});

const status = StringEnum(SILENCE_STATUSES, { description: 'pending (not started), active, or expired (ended, or deleted).' });

export const Silence = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    filters: StoredFilters,
    rule_ids: Nullable(Type.Array(Type.String({ format: 'uuid' }), { description: 'null: every rule of the organization.' })),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    comment: Type.String(),
    status,
    silenced_count: Type.Integer({ description: 'Matches it held back: recorded, never e-mailed.' }),
    added_date: Type.String({ format: 'date-time' }),
    last_update_date: Type.String({ format: 'date-time' }),
  },
  { $id: 'NotificationSilence' },
);

export const SilenceList = Type.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  result_count: Type.Integer({ description: 'Number of silences matching the filters, over all pages.' }),
  results: Type.Array(Type.Unsafe({ $ref: 'NotificationSilence#' })),
});

export const SilenceIdParams = Type.Object({ silence_id: Type.String({ description: 'The silence identifier.' }) });

export const SilenceListQuery = Type.Object({
  page: Type.Optional(QueryParam(`Page number, 1 to ${SILENCE_LIMITS.maxPage}. Default 1.`)),
  page_size: Type.Optional(QueryParam(`Silences per page, ${SILENCE_LIMITS.minPageSize} to ${SILENCE_LIMITS.maxPageSize}. Default ${SILENCE_LIMITS.defaultPageSize}.`)),
  status__in: Type.Optional(QueryParam('Comma-separated statuses: pending, active, expired.', 'active,pending')),
});
