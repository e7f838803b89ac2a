import { FREQUENCIES, SCOPES, type Frequency, type Scope } from '../scopes';
import { messages } from '../messages';
import { mergeIssues, ValidationFailed, type FieldIssue } from '../errors';
import { queryReader, type Ordering } from '../validation/query-reader';

/** Paging bounds of the list endpoint (spec, Limits). */
export const RULE_LIST_LIMITS = { maxPage: 800, minPageSize: 25, maxPageSize: 100, defaultPageSize: 100 } as const;

export const RULE_ORDERING_FIELDS = ['name', 'scope', 'frequency', 'enabled', 'added_date', 'last_update_date'] as const;
export type RuleOrderingField = (typeof RULE_ORDERING_FIELDS)[number];
export type RuleOrdering = Ordering<RuleOrderingField>;

export interface RuleListQuery {
  page: number;
  pageSize: number;
  ordering: RuleOrdering[];
  nameContains?: string;
  nameNotContains?: string;
  scopeIn?: Scope[];
  scopeNin?: Scope[];
  frequencyIn?: Frequency[];
  frequencyNin?: Frequency[];
  membersIn?: string[];
  membersNin?: string[];
  enabled?: boolean;
  addedDateLte?: Date;
  addedDateGte?: Date;
  lastUpdateDateLte?: Date;
  lastUpdateDateGte?: Date;
}

export type RawQuery = Record<string, string | string[] | undefined>;

const BOOLEANS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

/** Parses and validates the list endpoint's query (product decisions §3); throws ValidationFailed. */
export function parseRuleListQuery(raw: RawQuery): RuleListQuery {
  const issues: FieldIssue[] = [];
  const fail = (param: string, detail: string) => issues.push({ param, details: [detail] });
  const { single, integer, choices, uuids, date, text, ordering } = queryReader(raw, issues);

  const query: RuleListQuery = {
    page: integer('page', 1, 1, RULE_LIST_LIMITS.maxPage),
    pageSize: integer('page_size', RULE_LIST_LIMITS.defaultPageSize, RULE_LIST_LIMITS.minPageSize, RULE_LIST_LIMITS.maxPageSize),
    ordering: ordering('ordering', RULE_ORDERING_FIELDS, { field: 'added_date', direction: 'desc' }),
    nameContains: text('name__contains'),
    nameNotContains: text('name__not_contains'),
    scopeIn: choices('scope__in', SCOPES),
    scopeNin: choices('scope__nin', SCOPES),
    frequencyIn: choices('frequency__in', FREQUENCIES),
    frequencyNin: choices('frequency__nin', FREQUENCIES),
    membersIn: uuids('members__in'),
    membersNin: uuids('members__nin'),
    addedDateLte: date('added_date__lte'),
    addedDateGte: date('added_date__gte'),
    lastUpdateDateLte: date('last_update_date__lte'),
    lastUpdateDateGte: date('last_update_date__gte'),
  };

  const enabled = single('enabled');
  if (enabled !== undefined && enabled !== '') {
    const parsed = BOOLEANS[enabled.trim().toLowerCase()];
    if (parsed === undefined) fail('enabled', messages.boolean);
    else query.enabled = parsed;
  }

  if (issues.length) throw new ValidationFailed(mergeIssues(issues));
  return query;
}
