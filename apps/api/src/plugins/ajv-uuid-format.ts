import type { Ajv } from 'ajv';
import { isUuid } from '@notify/core';

/**
 * Ajv format `uuid`, strict. ajv-formats' `uuid` also accepts a `urn:uuid:` prefix, which
 * PostgreSQL's uuid type refuses: `members: ["urn:uuid:<uuid>"]` passed validation and then
 * failed the insert with a 500 (found by test/faults/hostile-input.test.ts). Only the plain
 * textual form is a valid UUID here, the same rule as the domain's `isUuid`.
 */
export function addStrictUuidFormat(ajv: Ajv): Ajv {
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  return ajv;
}
