import { describe, expect, it } from 'vitest';
import type { FieldCatalog } from './fields';
import { defineField } from './fields';
import { validateFilters } from './validate';

const issuesOf = (input: unknown, options?: Parameters<typeof validateFilters>[1]) => {
  const result = validateFilters(input, options);
  return result.ok ? [] : result.issues;
};
const one = (param: string, message: string) => [{ param, message }];

describe('validateFilters: accepted input', () => {
  it('accepts the documented example and returns a normalized deep copy', () => {
    const input = {
      must: [{ name: 'severity', type: 'in', value: ['high', 'critical'] }],
      should: [
        { name: 'asset', type: 'wildcard', value: '*.example.com' },
        { name: 'tags', type: 'contains_any', value: ['production'] },
      ],
      must_not: [{ name: 'tags', type: 'contains_any', value: ['test'] }],
    };
    const result = validateFilters(input);
    expect(result).toEqual({ ok: true, value: input });
    if (!result.ok) return;
    expect(result.value.must).not.toBe(input.must);
    expect(result.value.must[0]).not.toBe(input.must[0]);
    expect(result.value.must[0]?.value).not.toBe(input.must[0]?.value);
  });

  it('fills absent clauses with empty lists and keeps an omitted exists value omitted', () => {
    expect(validateFilters({})).toEqual({ ok: true, value: { must: [], should: [], must_not: [] } });
    expect(validateFilters({ should: [{ name: 'data.x', type: 'exists' }] })).toEqual({
      ok: true,
      value: { must: [], should: [{ name: 'data.x', type: 'exists' }], must_not: [] },
    });
  });

  it.each([
    { name: 'asset', type: 'eq', value: '' },
    { name: 'severity', type: 'eq', value: 'CRITICAL' },
    { name: 'severity', type: 'gte', value: 'Medium' },
    { name: 'tags', type: 'in', value: ['a', 'b'] },
    { name: 'tags', type: 'wildcard', value: 'prod-*' },
    { name: 'data.port', type: 'eq', value: 3389 },
    { name: 'data.enabled', type: 'eq', value: false },
    { name: 'data.port', type: 'in', value: [22, '22', true] },
    { name: 'data.ids', type: 'contains_all', value: [1, 'two'] },
    { name: 'data.seen', type: 'gte', value: '2024-01-01T00:00:00Z' },
    { name: 'data.score', type: 'lte', value: -1.5 },
    { name: 'data.A-b_9', type: 'exists', value: false },
    { name: `data.${'k'.repeat(128)}`, type: 'exists' },
    { name: 'asset', type: 'startswith', value: 'x'.repeat(1024) },
  ])('accepts %j', (condition) => {
    expect(issuesOf({ must: [condition] })).toEqual([]);
  });
});

describe('validateFilters: root and clauses', () => {
  it.each([
    [[], 'list'],
    ['x', 'str'],
    [1, 'number'],
    [1.5, 'number'],
    [true, 'bool'],
    [null, 'null'],
    [new Date(0), 'object'],
    [new Map(), 'object'],
  ])('rejects a root of %j', (input, type) => {
    expect(issuesOf(input)).toEqual(one('strategy', `Expected a dictionary of items but got type "${type}".`));
  });

  it('requires a root', () => {
    expect(issuesOf(undefined)).toEqual(one('strategy', 'This field is required.'));
  });

  it('rejects unknown clauses, including prototype-looking keys', () => {
    expect(issuesOf(JSON.parse('{"filter": [], "__proto__": [], "constructor": {}}'))).toEqual([
      { param: 'strategy.filter', message: 'Unknown clause. Use must, should or must_not.' },
      { param: 'strategy.__proto__', message: 'Unknown clause. Use must, should or must_not.' },
      { param: 'strategy.constructor', message: 'Unknown clause. Use must, should or must_not.' },
    ]);
  });

  it.each([
    ['x', 'str'],
    [{}, 'dict'],
    [null, 'null'],
    [3, 'number'],
  ])('rejects a clause of %j', (clause, type) => {
    expect(issuesOf({ should: clause })).toEqual(
      one('strategy.should', `Expected a list of items but got type "${type}".`),
    );
  });

  it('limits a clause to 50 conditions', () => {
    const condition = { name: 'asset', type: 'exists' };
    expect(issuesOf({ must: Array(50).fill(condition) })).toEqual([]);
    expect(issuesOf({ must: Array(51).fill(condition) })).toEqual(
      one('strategy.must', 'Ensure this field has no more than 50 elements.'),
    );
    expect(issuesOf({ must: Array(1_000_000).fill('junk') })).toHaveLength(1);
  });

  it('rejects conditions that are not dictionaries', () => {
    expect(issuesOf({ must: ['severity', [], null] })).toEqual([
      { param: 'strategy.must[0]', message: 'Expected a dictionary of items but got type "str".' },
      { param: 'strategy.must[1]', message: 'Expected a dictionary of items but got type "list".' },
      { param: 'strategy.must[2]', message: 'Expected a dictionary of items but got type "null".' },
    ]);
  });
});

describe('validateFilters: condition name and type', () => {
  it('requires name, type and (for most operators) value', () => {
    expect(issuesOf({ must: [{}] })).toEqual([
      { param: 'strategy.must[0].name', message: 'This field is required.' },
      { param: 'strategy.must[0].type', message: 'This field is required.' },
    ]);
    expect(issuesOf({ must: [{ name: 'asset', type: 'eq' }] })).toEqual(
      one('strategy.must[0].value', 'This field is required.'),
    );
  });

  it('rejects unknown keys in a condition', () => {
    expect(issuesOf({ must_not: [JSON.parse('{"name":"asset","type":"exists","op":1,"__proto__":{}}')] })).toEqual([
      { param: 'strategy.must_not[0].op', message: 'Unknown key. Use name, type or value.' },
      { param: 'strategy.must_not[0].__proto__', message: 'Unknown key. Use name, type or value.' },
    ]);
  });

  it.each([
    ['foo', '"foo" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.'],
    ['constructor', '"constructor" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.'],
    ['Asset', '"Asset" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.'],
    ['data', '"data" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.'],
    ['data.', '"data." is not a valid field. The key after "data." must be 1 to 128 letters, digits, "_" or "-".'],
    ['data.a.b', '"data.a.b" is not a valid field. The key after "data." must be 1 to 128 letters, digits, "_" or "-".'],
    ['data.a b', '"data.a b" is not a valid field. The key after "data." must be 1 to 128 letters, digits, "_" or "-".'],
    [
      `data.${'k'.repeat(129)}`,
      `"data.${'k'.repeat(129)}" is not a valid field. The key after "data." must be 1 to 128 letters, digits, "_" or "-".`,
    ],
    ['', 'This field may not be blank.'],
    [7, 'A valid string is required.'],
    [null, 'This field may not be null.'],
    ['x'.repeat(1025), 'Ensure this field has no more than 1024 characters.'],
    ['asset\u0000', 'Null characters are not allowed.'],
  ])('rejects the name %j', (name, message) => {
    expect(issuesOf({ must: [{ name, type: 'exists' }] })).toEqual(one('strategy.must[0].name', message));
  });

  it.each([
    ['between', '"between" is not a valid choice.'],
    ['EQ', '"EQ" is not a valid choice.'],
    ['', 'This field may not be blank.'],
    [['eq'], 'A valid string is required.'],
    ['eq\u0000', 'Null characters are not allowed.'],
  ])('rejects the type %j', (type, message) => {
    expect(issuesOf({ must: [{ name: 'asset', type, value: 'x' }] })).toEqual(one('strategy.must[0].type', message));
  });

  it.each([
    ['tags', 'gte', 'a'],
    ['asset', 'contains_any', ['a']],
    ['asset_type', 'lte', 'a'],
    ['severity', 'startswith', 'h'],
    ['severity', 'wildcard', 'h*'],
    ['severity', 'contains_all', ['high']],
  ])('rejects %s with %s', (name, type, value) => {
    expect(issuesOf({ must: [{ name, type, value }] })).toEqual(
      one('strategy.must[0].type', `"${type}" cannot be used on field "${name}".`),
    );
  });
});

describe('validateFilters: collecting issues', () => {
  it('reports every problem at once, in input order', () => {
    const input = {
      must: [
        { name: 'severity', type: 'in', value: ['high', 'urgent'] },
        { name: 'foo', type: 'eq', value: 'x' },
      ],
      extra: true,
      should: 'nope',
      must_not: [{ name: 'tags', type: 'between', value: [] }, { name: 'tags', type: 'gte', value: 1 }],
    };
    expect(issuesOf(input)).toEqual([
      {
        param: 'strategy.must[0].value[1]',
        message: '"urgent" is not a valid severity. Use one of: info, low, medium, high, critical.',
      },
      {
        param: 'strategy.must[1].name',
        message: '"foo" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.',
      },
      { param: 'strategy.extra', message: 'Unknown clause. Use must, should or must_not.' },
      { param: 'strategy.should', message: 'Expected a list of items but got type "str".' },
      { param: 'strategy.must_not[0].type', message: '"between" is not a valid choice.' },
      { param: 'strategy.must_not[1].type', message: '"gte" cannot be used on field "tags".' },
    ]);
  });

  it('still checks the value against the operator when the field is unknown', () => {
    expect(issuesOf({ must: [{ name: 'nope', type: 'in', value: 'x', op: 1 }] })).toEqual([
      {
        param: 'strategy.must[0].name',
        message: '"nope" is not a valid field. Use one of: asset, asset_type, severity, tags, data.<key>.',
      },
      { param: 'strategy.must[0].value', message: 'Expected a list of items but got type "str".' },
      { param: 'strategy.must[0].op', message: 'Unknown key. Use name, type or value.' },
    ]);
  });

  it('uses a custom root in every param', () => {
    expect(issuesOf([], { root: 'filters' })).toEqual(
      one('filters', 'Expected a dictionary of items but got type "list".'),
    );
    expect(issuesOf({ must: [{ name: 'asset' }], x: 1 }, { root: 'filters' })).toEqual([
      { param: 'filters.must[0].type', message: 'This field is required.' },
      { param: 'filters.x', message: 'Unknown clause. Use must, should or must_not.' },
    ]);
  });
});

describe('validateFilters: custom field catalog', () => {
  const ASSET_FIELDS: FieldCatalog = {
    fields: {
      asset: defineField('string'),
      tags: defineField('string_array'),
      scopes: defineField('string_array', ['contains_any', 'contains_all']),
      first_seen: defineField('date'),
    },
  };
  const check = (condition: object) => issuesOf({ must: [condition] }, { root: 'filters', fields: ASSET_FIELDS });

  it('accepts its own fields', () => {
    expect(check({ name: 'scopes', type: 'contains_any', value: ['new_asset_added'] })).toEqual([]);
    expect(check({ name: 'first_seen', type: 'gte', value: '2024-01-31T23:59:59.123+02:00' })).toEqual([]);
    expect(check({ name: 'first_seen', type: 'lte', value: '2024-02-29T00:00' })).toEqual([]);
    // Kiribati and Nepal, the edges of the offsets in use.
    for (const value of ['2024-01-01T00:00:00+14:00', '2024-01-01T00:00:00-1400', '2024-01-01T00:00+0545', '2024-01-01T00:00:00-12:00']) {
      expect(check({ name: 'first_seen', type: 'gte', value })).toEqual([]);
    }
  });

  it('lists its own fields and enforces its own operators', () => {
    expect(check({ name: 'severity', type: 'exists' })).toEqual(
      one('filters.must[0].name', '"severity" is not a valid field. Use one of: asset, tags, scopes, first_seen.'),
    );
    expect(check({ name: 'data.x', type: 'exists' })).toEqual(
      one('filters.must[0].name', '"data.x" is not a valid field. Use one of: asset, tags, scopes, first_seen.'),
    );
    expect(check({ name: 'scopes', type: 'in', value: ['x'] })).toEqual(
      one('filters.must[0].type', '"in" cannot be used on field "scopes".'),
    );
  });

  it.each([
    '2024-01-01', '2023-02-29T00:00:00Z', '2024-01-01T24:00', '2024-13-01T00:00', 'yesterday', '1704067200',
    // Offsets beyond ±14:00 or with 60+ minutes reached PostgreSQL and failed there.
    '2024-01-01T00:00:00+99:99', '2024-01-01T00:00:00+2400', '2024-01-01T00:00:00-14:01', '2024-01-01T00:00:00+15:00', '2024-01-01T00:00:00+05:60',
  ])(
    'rejects the date %j',
    (value) => {
      expect(check({ name: 'first_seen', type: 'gte', value })).toEqual(
        one(
          'filters.must[0].value',
          'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
        ),
      );
    },
  );
});
