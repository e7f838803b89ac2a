import type { Ajv } from 'ajv';
import { ASSET_FIELDS, validateFilters } from '@notify/core';

/** The keyword of asset-search filters: the condition language over the asset inventory's fields. */
export const ASSET_FILTERS_KEYWORD = 'x-asset-filters';

/**
 * Ajv keyword `x-asset-filters: <root>`: like `x-filters`, validates a condition-language
 * object with the domain validator, but against ASSET_FIELDS, so each problem (an unknown
 * field, an operator the field does not take, a value of the wrong type) is reported once at
 * its exact path (`filters.must[0].type`), in the same 400 as the body's other problems.
 */
export function addAssetFiltersKeyword(ajv: Ajv): Ajv {
  ajv.addKeyword({
    keyword: ASSET_FILTERS_KEYWORD,
    schemaType: 'string',
    errors: true,
    validate: function validate(root: string, data: unknown) {
      const self = validate as unknown as { errors: unknown[] | null };
      const result = data === null ? ({ ok: true } as const) : validateFilters(data, { root, fields: ASSET_FIELDS });
      if (result.ok) {
        self.errors = null;
        return true;
      }
      self.errors = [{ keyword: ASSET_FILTERS_KEYWORD, message: 'invalid filters', params: { issues: result.issues } }];
      return false;
    },
  });
  return ajv;
}
