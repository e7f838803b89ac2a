export type Operator =
  | 'eq'
  | 'in'
  | 'startswith'
  | 'endswith'
  | 'wildcard'
  | 'contains_any'
  | 'contains_all'
  | 'exists'
  | 'gte'
  | 'lte';

export const OPERATORS: readonly Operator[] = Object.freeze([
  'eq',
  'in',
  'startswith',
  'endswith',
  'wildcard',
  'contains_any',
  'contains_all',
  'exists',
  'gte',
  'lte',
] as const);

export function isOperator(value: unknown): value is Operator {
  return typeof value === 'string' && (OPERATORS as readonly string[]).includes(value);
}

export interface Condition {
  name: string;
  type: Operator;
  value?: unknown;
}

/** Normalized: a clause absent from the input is an empty array here. */
export interface Filters {
  must: Condition[];
  should: Condition[];
  must_not: Condition[];
}

export const CLAUSES = ['must', 'should', 'must_not'] as const satisfies readonly (keyof Filters)[];

export interface ConditionIssue {
  /** Path of the offending input, e.g. `strategy.must[0].type`. */
  param: string;
  message: string;
}

export type ValidationResult = { ok: true; value: Filters } | { ok: false; issues: ConditionIssue[] };

export interface MatchableEvent {
  /** Read by silences' filters (SILENCE_FIELDS); a rule's strategy cannot name it, its scope is fixed. */
  scope?: string;
  asset: string;
  asset_type?: string | null;
  severity?: string | null;
  tags?: readonly string[] | null;
  data?: Record<string, unknown> | null;
}

export type Predicate = (event: MatchableEvent) => boolean;

/** Bounds that keep a stored rule cheap to evaluate on every event. */
export const CONDITION_LIMITS: {
  readonly maxConditionsPerClause: number;
  readonly maxValues: number;
  readonly maxStringLength: number;
} = Object.freeze({ maxConditionsPerClause: 50, maxValues: 100, maxStringLength: 1024 });
