import { mergeIssues, ValidationFailed, type FieldIssue } from '../errors';
import type { RawQuery } from '../rules/list-query';
import { queryReader, type Ordering } from '../validation/query-reader';

/** A delivery's status as customers see it (`suppressed`: an address known to bounce, nothing sent). */
export const DELIVERY_STATUSES = ['pending', 'sending', 'sent', 'failed', 'cancelled', 'suppressed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** What an e-mail was: an instant alert, a digest, or an operator's or customer's test send. */
export const DELIVERY_KINDS = ['instant', 'digest', 'test'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
export const DELIVERY_ORDERING_FIELDS = ['period_end', 'period_start', 'sent_at', 'status', 'attempts'] as const;
export type DeliveryOrderingField = (typeof DELIVERY_ORDERING_FIELDS)[number];

export const DELIVERY_LOG_LIMITS = { maxPage: 1000, minPageSize: 1, maxPageSize: 100, defaultPageSize: 50 } as const;

export interface DeliveryLogQuery {
  page: number;
  pageSize: number;
  statusIn?: DeliveryStatus[];
  kindIn?: DeliveryKind[];
  sentAtGte?: Date;
  sentAtLte?: Date;
  ordering: Array<Ordering<DeliveryOrderingField>>;
}

/** Parses the delivery log's query (page, page_size, status__in, kind__in, sent_at__gte/lte, ordering); throws ValidationFailed. */
export function parseDeliveryLogQuery(raw: RawQuery): DeliveryLogQuery {
  const issues: FieldIssue[] = [];
  const { integer, choices, date, ordering } = queryReader(raw, issues);
  const query: DeliveryLogQuery = {
    page: integer('page', 1, 1, DELIVERY_LOG_LIMITS.maxPage),
    pageSize: integer('page_size', DELIVERY_LOG_LIMITS.defaultPageSize, DELIVERY_LOG_LIMITS.minPageSize, DELIVERY_LOG_LIMITS.maxPageSize),
    statusIn: choices('status__in', DELIVERY_STATUSES),
    kindIn: choices('kind__in', DELIVERY_KINDS),
    sentAtGte: date('sent_at__gte'),
    sentAtLte: date('sent_at__lte'),
    ordering: ordering('ordering', DELIVERY_ORDERING_FIELDS, { field: 'period_end', direction: 'desc' }),
  };
  if (issues.length) throw new ValidationFailed(mergeIssues(issues));
  return query;
}

/** Bounds the text a reply code is looked for in (last_error is bounded when stored, too). */
const MAX_ERROR_SCAN = 2000;

/**
 * What a customer is told of a failed attempt: a short class and the SMTP server's reply code,
 * never the server's words or anything of ours (hosts, stacks). Null when nothing failed.
 */
export function customerError(status: string, lastError: string | null): string | null {
  if (status === 'suppressed') return 'suppressed: the address bounced before';
  if (status === 'cancelled') return 'cancelled: the member was removed';
  if (!lastError) return null;
  // Three digits standing alone, 4xx or 5xx: linear, no backtracking.
  const code = /(?:^|\D)([45]\d\d)(?!\d)/.exec(lastError.slice(0, MAX_ERROR_SCAN))?.[1];
  if (!code) return status === 'sent' ? null : 'unreachable: the mail server could not be reached';
  return `${code.startsWith('5') ? 'rejected' : 'deferred'}: SMTP ${code}`;
}
