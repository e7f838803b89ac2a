export type {
  Condition,
  ConditionIssue,
  Filters,
  MatchableEvent,
  Operator,
  Predicate,
  ValidationResult,
} from './types';
export { CONDITION_LIMITS, OPERATORS } from './types';
export type { FieldCatalog, FieldKind, FieldSpec } from './fields';
export { EVENT_FIELDS, KIND_OPERATORS, SILENCE_FIELDS, defineField } from './fields';
export type { ValidateOptions } from './validate';
export { validateFilters } from './validate';
export { compileFilters } from './compile';
export { STRATEGY_COST_LIMIT, strategyCost, strategyCostIssue } from './cost';
