import type { Ajv } from 'ajv';
import { validateFilters } from '@notify/core';

/**
 * Ajv keyword `x-filters: <root>`: validates a condition-language object with the
 * domain validator. Replaces the structural checks of the documented shape, so
 * each problem is reported once, at its exact path.
 */
export function addFiltersKeyword(ajv: Ajv): Ajv {
  ajv.addKeyword({
    keyword: 'x-filters',
    schemaType: 'string',
    errors: true,
    validate: function validate(root: string, data: unknown) {
      const self = validate as unknown as { errors: unknown[] | null };
      // null means "no conditions" wherever the language is used.
      const result = data === null ? ({ ok: true } as const) : validateFilters(data, { root });
      if (result.ok) {
        self.errors = null;
        return true;
      }
      self.errors = [{ keyword: 'x-filters', message: 'invalid filters', params: { issues: result.issues } }];
      return false;
    },
  });
  return ajv;
}
