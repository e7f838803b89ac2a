import { isUuid } from '../ids';
import { messages } from '../messages';
import type { FieldIssue } from '../errors';
import type { RawQuery } from '../rules/list-query';
import { parseIsoDateTime } from './iso-date-time';

/**
 * Readers of a list endpoint's query parameters, the DRF way: each reads one parameter, adds its
 * problems to `issues` (the caller throws them together) and returns the value or a fallback.
 */
/** One field of an `ordering` parameter. */
export interface Ordering<F extends string> {
  field: F;
  direction: 'asc' | 'desc';
}

export function queryReader(raw: RawQuery, issues: FieldIssue[]) {
  const fail = (param: string, detail: string) => issues.push({ param, details: [detail] });
  // The last value wins for single-valued parameters; list parameters take every value.
  const single = (name: string): string | undefined => {
    const value = raw[name];
    return Array.isArray(value) ? value[value.length - 1] : value;
  };
  const list = (name: string): string[] | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    const items = (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(','));
    return items.map((item) => item.trim()).filter((item) => item !== '');
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = single(name);
    if (value === undefined || value.trim() === '') return fallback;
    if (!/^\s*[+-]?\d+\s*$/.test(value)) {
      fail(name, messages.integer);
      return fallback;
    }
    const parsed = Number(value);
    if (parsed < min) fail(name, messages.min(min));
    else if (parsed > max) fail(name, messages.max(max));
    return parsed;
  };
  const choices = <T extends string>(name: string, allowed: readonly T[]): T[] | undefined => {
    const values = list(name);
    if (values === undefined) return undefined;
    const bad = values.filter((value) => !(allowed as readonly string[]).includes(value));
    if (bad.length) issues.push({ param: name, details: bad.map((value) => messages.choice(value)) });
    return [...new Set(values)] as T[];
  };
  const uuids = (name: string): string[] | undefined => {
    const values = list(name);
    if (values === undefined) return undefined;
    if (values.some((value) => !isUuid(value))) fail(name, messages.uuid);
    return [...new Set(values.map((value) => value.toLowerCase()))];
  };
  const date = (name: string): Date | undefined => {
    const value = single(name);
    if (value === undefined || value === '') return undefined;
    const parsed = parseIsoDateTime(value);
    if (!parsed) fail(name, messages.datetime);
    return parsed;
  };
  const text = (name: string): string | undefined => {
    const value = single(name);
    if (value === undefined || value === '') return undefined;
    // PostgreSQL text cannot hold NUL: `name__contains=%00` reached the query and failed with
    // a 500 (found by test/faults/hostile-input.test.ts). Bodies refuse NUL too (400).
    if (value.includes('\0')) {
      fail(name, messages.nullCharacter);
      return undefined;
    }
    return value;
  };

  /**
   * An `ordering` parameter: comma-separated fields, each `-` for descending; an unknown field is
   * refused, a repeated one counts once; none given: `fallback`.
   */
  const ordering = <F extends string>(name: string, fields: readonly F[], fallback: Ordering<F>): Array<Ordering<F>> => {
    const result: Array<Ordering<F>> = [];
    const seen = new Set<string>();
    for (const item of list(name) ?? []) {
      const field = item.replace(/^[-+]/, '');
      if (!(fields as readonly string[]).includes(field)) {
        fail(name, messages.choice(item));
        continue;
      }
      if (seen.has(field)) continue;
      seen.add(field);
      result.push({ field: field as F, direction: item.startsWith('-') ? 'desc' : 'asc' });
    }
    return result.length ? result : [fallback];
  };

  return { single, list, integer, choices, uuids, date, text, ordering, fail };
}
