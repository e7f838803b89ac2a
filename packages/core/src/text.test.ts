import { describe, expect, it } from 'vitest';
import { hasControlCharacter } from './text';

describe('hasControlCharacter', () => {
  it.each(['a\r\nb', 'a\nb', 'a\rb', 'a\0b', 'a\tb', 'a\u007fb', 'a\u0085b', 'a\u009fb', 'a\u2028b', 'a\u2029b'])('finds one in %j', (text) => {
    expect(hasControlCharacter(text)).toBe(true);
  });

  it('passes ordinary text, accents and emoji', () => {
    for (const text of ['Port 3389 open', 'Zürich · Ünïcödé', '🔥 alert', '']) expect(hasControlCharacter(text)).toBe(false);
  });

  it('lets line breaks and tabs through in multi-line text, nothing else', () => {
    expect(hasControlCharacter('line 1\r\nline 2\tx\u2028y', { multiline: true })).toBe(false);
    for (const text of ['a\0b', 'a\u0007b', 'a\u007fb', 'a\u0085b']) expect(hasControlCharacter(text, { multiline: true })).toBe(true);
  });
});
