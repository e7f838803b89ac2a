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

// YYYY-MM-DD, optionally Thh:mm[:ss[.ffffff]], optionally Z or ±HH:MM (a '+' that a
// query string turned into a space is taken back as '+').
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+\- ]\d{2}:?\d{2})?$/i;

/** Real UTC offsets run from -12:00 to +14:00; beyond that (+99:99, +2400) is no time zone at all. */
export const MAX_UTC_OFFSET_MINUTES = 14 * 60;

/** An offset's `HH`, `MM` within a real time zone's range. */
export function isRealUtcOffset(hours: number, minutes: number): boolean {
  return minutes <= 59 && hours * 60 + minutes <= MAX_UTC_OFFSET_MINUTES;
}

export function parseIsoDateTime(raw: string): Date | undefined {
  const match = DATETIME.exec(raw.trim());
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '0', zone = 'Z'] = match;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    if (!isRealUtcOffset(Number(digits.slice(0, 2)), Number(digits.slice(2)))) return undefined;
  }
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone[0] === '-' ? '-' : '+'}${zone.slice(1).replace(':', '').replace(/^(\d{2})(\d{2})$/, '$1:$2')}`;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return undefined;
  // Reject dates that JavaScript silently rolls over (2026-02-30 -> March 2).
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  // Years 1 to 9999 only, local and UTC (the range of the DRF/Python datetimes users know).
  // Year 0000 used to pass here and then fail PostgreSQL's ISO input with a 500 on ingest
  // ("date/time field value out of range", found by test/faults/hostile-input.test.ts).
  const utcYear = date.getUTCFullYear();
  if (Number(year) < 1 || utcYear < 1 || utcYear > 9999) return undefined;
  return date;
}

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
