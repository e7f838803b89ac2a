import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRealUtcOffset, parseIsoDateTime } from './iso-date-time';

/**
 * The reading parseIsoDateTime is held to, written out again on purpose: the pattern and Date's
 * own parse it replaced (commit 55f1f88). Kept here as the test's oracle only.
 */
const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+\- ]\d{2}:?\d{2})?$/i;
function byPattern(raw: string): Date | undefined {
  const match = PATTERN.exec(raw.trim());
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '0', zone = 'Z'] = match;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    if (!isRealUtcOffset(Number(digits.slice(0, 2)), Number(digits.slice(2)))) return undefined;
  }
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone[0] === '-' ? '-' : '+'}${zone.slice(1).replace(':', '').replace(/^(\d{2})(\d{2})$/, '$1:$2')}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  const utcYear = date.getUTCFullYear();
  if (Number(year) < 1 || utcYear < 1 || utcYear > 9999) return undefined;
  return date;
}

const iso = (text: string) => parseIsoDateTime(text)?.toISOString();

describe('parseIsoDateTime', () => {
  it('reads a date, a time, its fraction and its offset', () => {
    expect(iso('2026-11-28')).toBe('2026-11-28T00:00:00.000Z');
    expect(iso(' 2026-11-28T15:12 ')).toBe('2026-11-28T15:12:00.000Z');
    expect(iso('2026-11-28t15:12:33z')).toBe('2026-11-28T15:12:33.000Z');
    expect(iso('2026-11-28T15:12:33.5Z')).toBe('2026-11-28T15:12:33.500Z');
    expect(iso('2026-11-28T15:12:33.123999Z')).toBe('2026-11-28T15:12:33.123Z');
    expect(iso('2026-11-28T15:12:33+05:30')).toBe('2026-11-28T09:42:33.000Z');
    expect(iso('2026-11-28 15:12:33-0130')).toBe('2026-11-28T16:42:33.000Z');
    // A '+' that a query string made a space.
    expect(iso('2026-11-28T15:12:33 14:00')).toBe('2026-11-28T01:12:33.000Z');
    expect(iso('0004-02-29T00:00:00Z')).toBe('0004-02-29T00:00:00.000Z');
    expect(iso('0050-06-01T00:00:00Z')).toBe('0050-06-01T00:00:00.000Z');
  });

  it('refuses what is not a time that exists', () => {
    for (const text of [
      '', '2026-11', '2026/11/28', '2026-11-28T', '2026-11-28T15', '2026-11-28T15:12:', '2026-11-28T15:12:33.', '2026-11-28T15:12:33.1234567Z',
      '2026-02-29', '2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '0100-02-29',
      '2026-11-28T24:00', '2026-11-28T23:60', '2026-11-28T23:59:60', '2026-11-28T10:00+14:01', '2026-11-28T10:00+12:60', '2026-11-28T10:00+5:00',
      '2026-11-28T10:00ZZ', '2026-11-28T10:00 Z', '0000-01-01', '0001-01-01T00:00+00:01', '9999-12-31T23:59-00:01', '２０２６-11-28',
    ]) expect(iso(text), text).toBeUndefined();
  });

  it('reads every text as the pattern and Date did', () => {
    const pick = (...values: string[]) => fc.constantFrom(...values);
    const digits = (n: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map((d) => d.join(''));
    /** Mostly what the grammar wants, sometimes something near it. */
    const mostly = (wanted: fc.Arbitrary<string>, near: fc.Arbitrary<string>) => fc.oneof({ arbitrary: wanted, weight: 10 }, { arbitrary: near, weight: 1 });
    const two = (...values: string[]) => mostly(fc.oneof(pick(...values), digits(2)), pick('1', '123', ''));
    const time = fc.tuple(
      mostly(pick('T', 't', ' '), pick('x', '')), two('00', '09', '23', '24'), mostly(fc.constant(':'), pick('', '.')), two('00', '30', '59', '60'),
      fc.option(fc.tuple(mostly(fc.constant(':'), fc.constant('')), two('00', '59', '60'),
        fc.option(fc.tuple(mostly(fc.constant('.'), pick(',', '')), fc.nat(8).chain(digits))))),
    ).map(([separator, hour, colon, minute, rest]) => `${separator}${hour}${colon}${minute}${rest ? `${rest[0]}${rest[1]}${rest[2] ? rest[2].join('') : ''}` : ''}`);
    const zone = fc.oneof(
      pick('Z', 'z', 'ZZ', '+', 'UTC'),
      fc.tuple(mostly(pick('+', '-', ' '), pick('*', '')), two('00', '05', '12', '14', '15'), mostly(pick(':', ''), fc.constant('::')), two('00', '01', '30', '59', '60')).map((p) => p.join('')),
    );
    const text = fc.tuple(
      mostly(fc.constant(''), pick(' ', '\t', '\n', '\u00a0')),
      fc.oneof(pick('0000', '0001', '0004', '0099', '0100', '1900', '2000', '2026', '9999', '999', '10000'), digits(4)),
      mostly(fc.constant('-'), pick('/', '')), two('01', '02', '09', '12', '00', '13'), mostly(fc.constant('-'), fc.constant('')), two('01', '28', '29', '30', '31', '00', '32'),
      fc.option(time), fc.option(zone), mostly(fc.constant(''), pick(' ', '\n', 'x')),
    ).map((pieces) => pieces.map((piece) => piece ?? '').join(''));
    // Times that exist, written every way the grammar allows.
    const written = fc.tuple(
      fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T00:00:00Z'), noInvalidDate: true }),
      pick('T', 't', ' '), fc.nat(6), pick('Z', 'z', '', '+05:30', '-0800', ' 14:00', '+14:00', '-12:00'),
    ).map(([date, separator, fraction, offset]) => {
      const [day, rest] = date.toISOString().replace(/^\+0*(?=\d{4})/, '').split('T') as [string, string];
      const clock = rest.slice(0, 8);
      return `${day}${separator}${clock}${fraction ? `.${rest.slice(9, 12)}${'7'.repeat(Math.max(0, fraction - 3))}`.slice(0, fraction + 1) : ''}${offset}`;
    });
    let times = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: text, weight: 6 }, { arbitrary: written, weight: 3 }, { arbitrary: fc.string(), weight: 1 }), (raw) => {
        const expected = byPattern(raw)?.getTime();
        if (expected !== undefined) times++;
        expect(parseIsoDateTime(raw)?.getTime(), JSON.stringify(raw)).toBe(expected);
      }),
      { numRuns: 30_000 },
    );
    // The runs must have compared times, not only refusals.
    expect(times).toBeGreaterThan(5_000);
  });
});
