import { mergeIssues, ValidationFailed, type FieldIssue } from '../errors';
import type { Filters } from '../conditions';
import type { RawQuery } from '../rules/list-query';
import { parseIsoDateTime } from '../validation/iso-date-time';
import { messages } from '../messages';
import { queryReader } from '../validation/query-reader';

/** Bounds of a silence: what one request may ask and what an organization may hold. */
export const SILENCE_LIMITS = {
  maxCommentLength: 1000,
  maxRuleIds: 500,
  /** Silences not yet expired that one organization may hold (each is evaluated on its every match). */
  maxUnexpiredPerOrganization: 1000,
  /** Page sizes of the list. */
  minPageSize: 1,
  maxPageSize: 100,
  defaultPageSize: 100,
  maxPage: 1000,
} as const;

export const SILENCE_STATUSES = ['pending', 'active', 'expired'] as const;
export type SilenceStatus = (typeof SILENCE_STATUSES)[number];

/** The body of POST /v1/platform/notification-silences after the schema's checks (filters already validated). */
export interface SilenceCreateBody {
  /** null only reaches here to be refused: the schema's keyword lets it through. */
  filters: Filters | null;
  rule_ids?: string[] | null;
  starts_at?: string | null;
  ends_at: string;
  comment: string;
}

export interface NewSilence {
  filters: Filters;
  /** null: every rule of the organization. */
  ruleIds: string[] | null;
  startsAt: Date;
  endsAt: Date;
  comment: string;
}

/** One year after `at`, calendar-wise (2026-02-28 → 2027-02-28). */
function yearAfter(at: Date): Date {
  const later = new Date(at);
  later.setUTCFullYear(later.getUTCFullYear() + 1);
  return later;
}

/**
 * The checks the schema cannot make (between fields, against the clock), as DRF field messages:
 * at least one condition, ends_at after starts_at and in the future, at most a year ahead.
 */
export function prepareNewSilence(body: SilenceCreateBody, now: Date): NewSilence {
  const issues: FieldIssue[] = [];
  const { filters } = body;
  if (filters === null) issues.push({ param: 'filters', details: [messages.notNull] });
  else if (filters.must.length + filters.should.length + filters.must_not.length === 0) {
    issues.push({ param: 'filters', details: ['Name at least one condition: a silence of everything would hide every alert.'] });
  }
  const startsAt = body.starts_at ? parseIsoDateTime(body.starts_at) : now;
  if (!startsAt) issues.push({ param: 'starts_at', details: [messages.datetime] });
  const endsAt = parseIsoDateTime(body.ends_at);
  if (!endsAt) issues.push({ param: 'ends_at', details: [messages.datetime] });
  else if (startsAt && endsAt.getTime() <= startsAt.getTime()) issues.push({ param: 'ends_at', details: ['Must be after starts_at.'] });
  else if (endsAt.getTime() <= now.getTime()) issues.push({ param: 'ends_at', details: ['Must be in the future.'] });
  else if (endsAt.getTime() > yearAfter(now).getTime()) issues.push({ param: 'ends_at', details: ['Must be at most one year ahead.'] });
  const comment = body.comment.trim();
  if (!comment) issues.push({ param: 'comment', details: [messages.notBlank] });
  if (issues.length || !filters || !startsAt || !endsAt) throw new ValidationFailed(issues);
  const ruleIds = body.rule_ids?.length ? [...new Set(body.rule_ids.map((id) => id.toLowerCase()))] : null;
  return { filters, ruleIds, startsAt, endsAt, comment };
}

export function silenceStatus(silence: { startsAt: Date; endsAt: Date }, now: Date): SilenceStatus {
  if (silence.endsAt.getTime() <= now.getTime()) return 'expired';
  return silence.startsAt.getTime() > now.getTime() ? 'pending' : 'active';
}

export interface SilenceListQuery {
  page: number;
  pageSize: number;
  statusIn?: SilenceStatus[];
}

/** Parses the silence list's query (page, page_size, status__in); throws ValidationFailed. */
export function parseSilenceListQuery(raw: RawQuery): SilenceListQuery {
  const issues: FieldIssue[] = [];
  const { integer, choices } = queryReader(raw, issues);
  const query: SilenceListQuery = {
    page: integer('page', 1, 1, SILENCE_LIMITS.maxPage),
    pageSize: integer('page_size', SILENCE_LIMITS.defaultPageSize, SILENCE_LIMITS.minPageSize, SILENCE_LIMITS.maxPageSize),
    statusIn: choices('status__in', SILENCE_STATUSES),
  };
  if (issues.length) throw new ValidationFailed(mergeIssues(issues));
  return query;
}
