import type { Ajv } from 'ajv';
import { ASSET_FIELDS, EVENT_FIELDS, SILENCE_FIELDS, strategyCostIssue, validateFilters, type ConditionIssue, type FieldCatalog, type Filters } from '@notify/core';

/** Rule strategies: the condition language over event fields. */
export const FILTERS_KEYWORD = 'x-filters';
/** Asset-search filters: the same language over the asset inventory's fields. */
export const ASSET_FILTERS_KEYWORD = 'x-asset-filters';
/** Silences' filters: the language over event fields and the scope. */
export const SILENCE_FILTERS_KEYWORD = 'x-silence-filters';

/**
 * Ajv keyword `<keyword>: <root>`: validates a condition-language object with the
 * domain validator against `fields`. It replaces the structural checks of the
 * documented shape, so each problem (an unknown field, an operator the field does
 * not take, a value of the wrong type) is reported once, at its exact path
 * (`strategy.must[0].type`), in the same 400 as the body's other problems.
 */
function filtersKeyword(keyword: string, fields: FieldCatalog, budget?: (filters: Filters, root: string) => ConditionIssue | null) {
  return (ajv: Ajv): Ajv => {
    ajv.addKeyword({
      keyword,
      schemaType: 'string',
      errors: true,
      validate: function validate(root: string, data: unknown) {
        const self = validate as unknown as { errors: unknown[] | null };
        // null means "no conditions" wherever the language is used.
        const result = data === null ? ({ ok: true, value: null } as const) : validateFilters(data, { root, fields });
        const overBudget = result.ok && result.value && budget ? budget(result.value, root) : null;
        const issues = result.ok ? (overBudget ? [overBudget] : []) : result.issues;
        self.errors = issues.length ? [{ keyword, message: 'invalid filters', params: { issues } }] : null;
        return issues.length === 0;
      },
    });
    return ajv;
  };
}

/** Strategies are evaluated on every event of their scope, so they also keep to a cost budget (core cost.ts). */
export const addFiltersKeyword = filtersKeyword(FILTERS_KEYWORD, EVENT_FIELDS, strategyCostIssue);
export const addAssetFiltersKeyword = filtersKeyword(ASSET_FILTERS_KEYWORD, ASSET_FIELDS);
/** A silence's filters run on every match of its organization: the strategies' budget applies. */
export const addSilenceFiltersKeyword = filtersKeyword(SILENCE_FILTERS_KEYWORD, SILENCE_FIELDS, strategyCostIssue);

/**
 * A body's filters in their normalized form (every clause present), once its keyword above has
 * refused anything invalid; null (or absent) stays null.
 */
export function normalizedFilters(filters: unknown, fields: FieldCatalog): Filters | null {
  if (filters === undefined || filters === null) return null;
  const result = validateFilters(filters, { root: 'filters', fields });
  return result.ok ? result.value : null;
}
