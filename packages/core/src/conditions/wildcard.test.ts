import { describe, expect, it } from 'vitest';
import { wildcardToRegExp } from './wildcard';

const matches = (pattern: string, text: string) => wildcardToRegExp(pattern).test(text);

describe('wildcardToRegExp', () => {
  it.each([
    ['*.example.com', 'www.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'www.example.com.evil.net', false],
    ['www.*', 'www.', true],
    ['*', '', true],
    ['**', 'anything', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'acb', false],
    ['a*b*c', 'abcX', false],
    ['*ab*ab', 'xabab', true],
    ['*ab*ab', 'abab', true],
    ['*ab*ab', 'ab', false],
    ['h?st', 'host', true],
    ['h?st', 'hst', false],
    ['h?st', 'hoost', false],
    ['??', 'ab', true],
    ['?*?', 'a', false],
    ['line*end', 'line\nin between\nend', true],
    ['Mail.*.COM', 'mail.example.com', true],
  ])('%j against %j is %s', (pattern, text, expected) => {
    expect(matches(pattern, text)).toBe(expected);
  });

  it('takes regex metacharacters literally', () => {
    expect(matches('a.b', 'a.b')).toBe(true);
    expect(matches('a.b', 'axb')).toBe(false);
    expect(matches('a+b', 'a+b')).toBe(true);
    expect(matches('a+b', 'aab')).toBe(false);
    expect(matches('(x|y)[0-9]{2}$^\\/', '(x|y)[0-9]{2}$^\\/')).toBe(true);
    expect(matches('(x|y)', 'x')).toBe(false);
    expect(matches('\\?', '\\x')).toBe(true);
    expect(matches('\\?', '?')).toBe(false);
  });

  it('stays fast on patterns that make a naive translation backtrack catastrophically', () => {
    const pattern = wildcardToRegExp(`${'*a'.repeat(40)}*b`);
    const started = performance.now();
    expect(pattern.test('a'.repeat(50_000))).toBe(false);
    expect(pattern.test(`${'a'.repeat(50_000)}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
