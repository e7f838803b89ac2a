import { describe, expect, it } from 'vitest';
import { validateFilters } from './validate';

const SEVERITY_HINT = 'Use one of: info, low, medium, high, critical.';

function valueIssues(name: string, type: string, value?: unknown) {
  const condition = value === undefined ? { name, type } : { name, type, value };
  const result = validateFilters({ must: [condition] });
  return result.ok ? [] : result.issues;
}

describe('condition values', () => {
  it.each<[string, string, unknown, string, string?]>([
    // eq
    ['asset', 'eq', 5, 'A valid string is required.'],
    ['tags', 'eq', true, 'A valid string is required.'],
    ['severity', 'eq', 'urgent', `"urgent" is not a valid severity. ${SEVERITY_HINT}`],
    ['severity', 'eq', 3, 'A valid string is required.'],
    ['data.x', 'eq', { a: 1 }, 'A valid string, number or boolean is required.'],
    ['data.x', 'eq', ['a'], 'A valid string, number or boolean is required.'],
    ['data.x', 'eq', Number.NaN, 'A valid number is required.'],
    ['data.x', 'eq', Number.POSITIVE_INFINITY, 'A valid number is required.'],
    ['data.x', 'eq', null, 'This field may not be null.'],
    // in
    ['asset', 'in', 'a', 'Expected a list of items but got type "str".'],
    ['asset', 'in', { 0: 'a' }, 'Expected a list of items but got type "dict".'],
    ['asset', 'in', [], 'This list may not be empty.'],
    ['asset', 'in', Array(101).fill('a'), 'Ensure this field has no more than 100 elements.'],
    ['asset', 'in', ['a', 1], 'A valid string is required.', '[1]'],
    ['severity', 'in', ['high', 'nope'], `"nope" is not a valid severity. ${SEVERITY_HINT}`, '[1]'],
    ['data.x', 'in', [null], 'A valid string, number or boolean is required.', '[0]'],
    ['data.x', 'in', [[1]], 'A valid string, number or boolean is required.', '[0]'],
    // startswith / endswith / wildcard
    ['asset', 'startswith', '', 'This field may not be blank.'],
    ['asset', 'endswith', ['a'], 'A valid string is required.'],
    ['asset', 'wildcard', 1, 'A valid string is required.'],
    ['data.x', 'wildcard', '', 'This field may not be blank.'],
    // contains_*
    ['tags', 'contains_any', 'production', 'Expected a list of items but got type "str".'],
    ['tags', 'contains_all', [], 'This list may not be empty.'],
    ['tags', 'contains_any', [1], 'A valid string is required.', '[0]'],
    ['data.x', 'contains_all', ['a', true], 'A valid string or number is required.', '[1]'],
    ['data.x', 'contains_any', Array(101).fill(1), 'Ensure this field has no more than 100 elements.'],
    // exists
    ['asset', 'exists', 'yes', 'Must be a valid boolean.'],
    ['asset', 'exists', 1, 'Must be a valid boolean.'],
    ['asset', 'exists', null, 'This field may not be null.'],
    // gte / lte
    ['severity', 'gte', 'HIGHEST', `"HIGHEST" is not a valid severity. ${SEVERITY_HINT}`],
    ['severity', 'lte', 2, 'A valid string is required.'],
    ['data.x', 'gte', true, 'A valid string or number is required.'],
    ['data.x', 'lte', [1], 'A valid string or number is required.'],
    // strings everywhere
    ['asset', 'eq', 'x'.repeat(1025), 'Ensure this field has no more than 1024 characters.'],
    ['asset', 'wildcard', 'a\u0000*', 'Null characters are not allowed.'],
    ['tags', 'in', ['ok', 'bad\u0000'], 'Null characters are not allowed.', '[1]'],
    ['data.x', 'gte', 'y'.repeat(2000), 'Ensure this field has no more than 1024 characters.'],
    ['severity', 'eq', 'z'.repeat(5000), 'Ensure this field has no more than 1024 characters.'],
  ])('%s %s %j', (name, type, value, message, suffix = '') => {
    expect(valueIssues(name, type, value)).toEqual([{ param: `strategy.must[0].value${suffix}`, message }]);
  });

  it.each(['eq', 'in', 'startswith', 'endswith', 'wildcard', 'contains_any', 'contains_all', 'gte', 'lte'])(
    '%s requires a value',
    (type) => {
      expect(valueIssues('data.x', type)).toEqual([{ param: 'strategy.must[0].value', message: 'This field is required.' }]);
    },
  );

  it('reports each bad element of a list', () => {
    expect(valueIssues('severity', 'in', ['x', 'high', 4])).toEqual([
      { param: 'strategy.must[0].value[0]', message: `"x" is not a valid severity. ${SEVERITY_HINT}` },
      { param: 'strategy.must[0].value[2]', message: 'A valid string is required.' },
    ]);
  });

  it('treats holes in a sparse list as missing strings', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(valueIssues('tags', 'contains_any', ['a', , 'b'])).toEqual([
      { param: 'strategy.must[0].value[1]', message: 'A valid string is required.' },
    ]);
  });

  it('accepts 100 values and strings of 1024 characters', () => {
    expect(valueIssues('tags', 'in', Array(100).fill('x'.repeat(1024)))).toEqual([]);
  });
});
