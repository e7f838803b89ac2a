import { describe, expect, it } from 'vitest';
import { secretChecker } from './bearer';

describe('secretChecker', () => {
  it('takes exactly the tokens it was given', () => {
    const isToken = secretChecker(['first-token', 'second-token']);
    expect(isToken('first-token')).toBe(true);
    expect(isToken('second-token')).toBe(true);
    expect(isToken('first-token ')).toBe(false);
    expect(isToken('first')).toBe(false);
    expect(isToken('first-token-and-more')).toBe(false);
    expect(isToken('FIRST-TOKEN')).toBe(false);
    expect(isToken(undefined)).toBe(false);
  });

  it('matches nothing with no token set, or only unset and empty ones', () => {
    for (const expected of [[], [undefined], [''], [undefined, '']]) {
      const isToken = secretChecker(expected);
      expect(isToken('')).toBe(false);
      expect(isToken('anything')).toBe(false);
      expect(isToken(undefined)).toBe(false);
    }
  });

  it('keeps the tokens it was given when the caller changes its array afterwards', () => {
    const tokens = ['kept-token'];
    const isToken = secretChecker(tokens);
    tokens[0] = 'other-token';
    expect(isToken('kept-token')).toBe(true);
    expect(isToken('other-token')).toBe(false);
  });
});
