import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEVERITIES } from '../scopes';
import { compileFilters } from './compile';
import type { Filters, MatchableEvent } from './types';
import { OPERATORS } from './types';
import { validateFilters } from './validate';

const throwing = new Proxy(
  {},
  {
    get: () => {
      throw new Error('get');
    },
    ownKeys: () => {
      throw new Error('ownKeys');
    },
    getPrototypeOf: () => {
      throw new Error('getPrototypeOf');
    },
    getOwnPropertyDescriptor: () => {
      throw new Error('getOwnPropertyDescriptor');
    },
  },
);
const withGetter = Object.defineProperty({}, 'must', {
  enumerable: true,
  get: () => {
    throw new Error('getter');
  },
});
const cyclic: Record<string, unknown> = { name: 'asset', type: 'eq' };
cyclic.value = cyclic;
let deep: unknown = 'x';
for (let i = 0; i < 100_000; i++) deep = [deep];

const WEIRD: unknown[] = [
  undefined,
  null,
  0,
  -0,
  Number.NaN,
  10n,
  Symbol('s'),
  () => 1,
  'strategy',
  new Date(),
  /re/,
  new Map([['must', []]]),
  Object.create(null),
  Object.assign(Object.create(null), { must: [{ name: 'asset', type: 'exists' }] }),
  Object.create({ must: [{ name: 'asset', type: 'exists' }] }),
  JSON.parse('{"__proto__": {"must": []}, "must": [{"__proto__": {"name": "asset"}}]}'),
  { must: [{ name: 'asset', type: 'eq', value: cyclic }] },
  { must: [cyclic] },
  { must: deep },
  { must: [{ name: 'data.x', type: 'in', value: deep }] },
  { must: [{ name: deep, type: deep, value: deep }] },
  { must: new Array(10_000_000) },
  { must: [{ name: 'tags', type: 'in', value: new Array(10_000_000) }] },
  { must: [{ name: 'asset', type: 'eq', value: 'x'.repeat(10_000_000) }] },
  { must: [{ name: 'x'.repeat(10_000_000), type: 'eq' }] },
  { must: [{ name: 'asset', type: { toString: () => 'eq' }, value: 'x' }] },
  { must: [throwing] },
  { must: throwing },
  { must: [{ name: 'asset', type: 'in', value: throwing }] },
  throwing,
  withGetter,
  { must: [withGetter] },
  { must: [Object.defineProperty({ type: 'exists' }, 'name', { enumerable: true, get: () => 'asset' })] },
  Object.freeze({ must: Object.freeze([Object.freeze({ name: 'asset', type: 'exists' })]) }),
];

describe('validateFilters never throws', () => {
  it.each(WEIRD.map((value, i) => [i, value] as const))('weird input #%i', (_i, value) => {
    const result = validateFilters(value);
    expect(typeof result.ok).toBe('boolean');
    if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  it('rejects accessor properties instead of skipping them, without running them', () => {
    expect(validateFilters(withGetter)).toEqual({
      ok: false,
      issues: [{ param: 'strategy.must', message: 'Expected a list of items but got type "object".' }],
    });
  });

  it('reports an exotic object whose traps throw as a non-dictionary', () => {
    expect(validateFilters({ must: [{ name: 'asset', type: 'in', value: throwing }] })).toEqual({
      ok: false,
      issues: [{ param: 'strategy', message: 'Expected a dictionary of items but got type "object".' }],
    });
  });

  it('on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true }), (value) => {
        const result = validateFilters(value);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });
});

const name = fc.constantFrom('asset', 'asset_type', 'severity', 'tags', 'data.port', 'data.x', 'data.__proto__', 'foo');
const scalar = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constantFrom(...SEVERITIES));
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.constant(null), fc.anything());
const condition = fc.record({ name, type: fc.constantFrom(...OPERATORS, 'between'), value }, { requiredKeys: [] });
const clause = fc.array(condition, { maxLength: 3 });
const filters = fc.record({ must: clause, should: clause, must_not: clause }, { requiredKeys: [] });

const event: fc.Arbitrary<MatchableEvent> = fc.record(
  {
    asset: fc.string({ maxLength: 10 }),
    asset_type: fc.option(fc.string({ maxLength: 4 })),
    severity: fc.option(fc.constantFrom(...SEVERITIES, 'HIGH', 'urgent')),
    tags: fc.option(fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 })),
    data: fc.option(fc.dictionary(fc.constantFrom('port', 'x', '__proto__', 'constructor'), fc.oneof(scalar, value))),
  },
  { requiredKeys: ['asset'] },
);
const hostileEvent = fc.oneof(
  event,
  fc.anything({ withNullPrototype: true, withBigInt: true }) as fc.Arbitrary<unknown> as fc.Arbitrary<MatchableEvent>,
  fc.constant(throwing as MatchableEvent),
  fc.constant({ asset: 'a', data: throwing } as unknown as MatchableEvent),
);

describe('validated filters', () => {
  it('are stable: validating the stored copy again yields the same value', () => {
    fc.assert(
      fc.property(filters, (input) => {
        const first = validateFilters(input);
        if (!first.ok) return;
        const stored = JSON.parse(JSON.stringify(first.value)) as unknown;
        expect(validateFilters(stored)).toEqual(first);
      }),
      { numRuns: 1000 },
    );
  });

  it('compile to predicates that never throw and always return a boolean', () => {
    fc.assert(
      fc.property(filters, fc.array(hostileEvent, { maxLength: 5 }), (input, events) => {
        const result = validateFilters(input);
        if (!result.ok) return;
        const matches = compileFilters(result.value);
        for (const e of events) expect(typeof matches(e)).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('obey the clause laws: must_not is the negation of must, should with one condition equals must', () => {
    fc.assert(
      fc.property(condition, event, (c, e) => {
        const result = validateFilters({ must: [c] });
        if (!result.ok) return;
        const only = result.value.must;
        const must = compileFilters({ must: only, should: [], must_not: [] })(e);
        expect(compileFilters({ must: [], should: only, must_not: [] })(e)).toBe(must);
        expect(compileFilters({ must: [], should: [], must_not: only })(e)).toBe(!must);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('compileFilters never throws on unvalidated filters', () => {
  it('on arbitrary condition shapes', () => {
    fc.assert(
      fc.property(filters, hostileEvent, (input, e) => {
        const matches = compileFilters(input as unknown as Filters);
        expect(typeof matches(e)).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });
});
