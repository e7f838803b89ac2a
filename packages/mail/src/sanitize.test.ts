import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasControlCharacter } from '@notify/core';
import { httpUrl, multiLine, singleLine, truncate } from './sanitize';

describe('sanitize', () => {
  it('makes one line of anything, without controls, separators or bidi overrides', () => {
    expect(singleLine('a\r\nb\tc\u0000d\u2028e\u202Ef  g ', 100)).toBe('a b c d e f g');
    expect(hasControlCharacter(singleLine('\u0007x\u007F\u0085', 10))).toBe(false);
  });

  it('makes of any text what replacing its unsafe characters and runs of spaces makes of it', () => {
    // eslint-disable-next-line no-control-regex -- the rule singleLine follows, written out
    const replaced = (value: string) => value.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]+/g, ' ').replace(/ {2,}/g, ' ').trim();
    const character = fc.constantFrom('a', 'Z', '0', ' ', ' ', '\t', '\n', '\r', '\u0000', '\u001F', '\u007F', '\u0085', '\u009F', '\u00A0', '\u2028', '\u2029', '\u202A', '\u202E', '\u2066', '\u2069', '\u2065', '\u206A', '\uFEFF', 'é', '😀');
    fc.assert(
      fc.property(fc.array(character, { maxLength: 30 }).map((characters) => characters.join('')), (value) => {
        expect(singleLine(value, 1000)).toBe(replaced(value));
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps line breaks in free text, normalised to LF', () => {
    expect(multiLine('one\r\ntwo\rthree\n\n\n\nfour\u0000', 100)).toBe('one\ntwo\nthree\n\nfour');
  });

  it('truncates by code points and marks the cut', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('😀😀😀😀😀', 3)).toBe('😀😀…');
    expect(truncate('short', 10)).toBe('short');
  });

  it('accepts only absolute http(s) URLs', () => {
    expect(httpUrl('https://example.com/a b')).toBe('https://example.com/a%20b');
    expect(httpUrl('HTTP://EXAMPLE.COM')).toBe('http://example.com/');
    for (const bad of ['javascript:alert(1)', ' javascript:alert(1)', 'java\nscript:alert(1)', 'data:text/html,x', 'vbscript:x', '//example.com', '/relative', 'mailto:a@b.c', 'ftp://x', '', null, undefined]) {
      expect(httpUrl(bad), String(bad)).toBeNull();
    }
  });
});
