import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, isoOf, nextDeliveryAt, periodsDue, schedule } from './test-support';

const HOUR = 3_600_000;
const lengthInHours = (start: Date, end: Date): number => (end.getTime() - start.getTime()) / HOUR;

describe('daylight saving in America/New_York', () => {
  it('delivers a 02:00 slot on the spring-forward night at 03:00 EDT (07:00Z)', () => {
    const daily = schedule('daily', 'America/New_York', 2);
    expect(nextDeliveryAt(daily, at('2026-03-07T12:00:00Z'))).toEqual(at('2026-03-08T07:00:00Z'));
    const period = periodContaining(daily, at('2026-03-08T06:30:00Z'));
    expect(period.start).toEqual(at('2026-03-07T07:00:00Z')); // 02:00 EST
    expect(period.end).toEqual(at('2026-03-08T07:00:00Z'));
    const after = periodContaining(daily, period.end);
    expect(after.end).toEqual(at('2026-03-09T06:00:00Z')); // 02:00 EDT
    expect(lengthInHours(after.start, after.end)).toBe(23);
  });

  it('delivers a 01:00 slot once on the fall-back night, at the first 01:00 (EDT)', () => {
    const daily = schedule('daily', 'America/New_York', 1);
    const dues = periodsDue(daily, at('2026-10-31T12:00:00Z'), at('2026-11-02T12:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-02T06:00:00.000Z']);
    // A match during the second 01:00 (EST) waits for the next day.
    expect(periodContaining(daily, at('2026-11-01T06:30:00Z')).dueAt).toEqual(at('2026-11-02T06:00:00Z'));
    expect(lengthInHours(dues[1]!.start, dues[1]!.end)).toBe(25);
  });

  it('applies the same rules to weekly and monthly slots', () => {
    // 2026-03-08 and 2026-11-01 are Sundays (day 6); 1 November is also a 1st.
    expect(nextDeliveryAt(schedule('weekly', 'America/New_York', 2, 6), at('2026-03-02T00:00:00Z'))).toEqual(at('2026-03-08T07:00:00Z'));
    expect(nextDeliveryAt(schedule('weekly', 'America/New_York', 1, 6), at('2026-10-26T00:00:00Z'))).toEqual(at('2026-11-01T05:00:00Z'));
    expect(nextDeliveryAt(schedule('monthly', 'America/New_York', 1), at('2026-10-15T00:00:00Z'))).toEqual(at('2026-11-01T05:00:00Z'));
  });
});

describe('daylight saving in Europe/Berlin', () => {
  it('delivers a 02:00 slot on the spring-forward night at 03:00 CEST (01:00Z)', () => {
    const daily = schedule('daily', 'Europe/Berlin', 2);
    expect(nextDeliveryAt(daily, at('2026-03-28T12:00:00Z'))).toEqual(at('2026-03-29T01:00:00Z'));
    const period = periodContaining(daily, at('2026-03-29T00:59:59Z'));
    expect(period.start).toEqual(at('2026-03-28T01:00:00Z')); // 02:00 CET
    expect(lengthInHours(period.start, period.end)).toBe(24);
    expect(nextDeliveryAt(daily, period.end)).toEqual(at('2026-03-30T00:00:00Z')); // 02:00 CEST
  });

  it('delivers a 02:00 slot once on the fall-back night, at the first 02:00 (CEST)', () => {
    const daily = schedule('daily', 'Europe/Berlin', 2);
    const dues = periodsDue(daily, at('2026-10-24T12:00:00Z'), at('2026-10-26T12:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-26T01:00:00.000Z']);
    expect(periodContaining(daily, at('2026-10-25T01:00:00Z')).dueAt).toEqual(at('2026-10-26T01:00:00Z'));
    expect(lengthInHours(dues[1]!.start, dues[1]!.end)).toBe(25);
  });

  it('keeps hours outside the transition on the wall clock', () => {
    const daily = schedule('daily', 'Europe/Berlin', 9);
    const dues = periodsDue(daily, at('2026-03-28T00:00:00Z'), at('2026-03-30T23:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(lengthInHours(dues[1]!.start, dues[1]!.end)).toBe(23);
  });
});

describe('a calendar day a zone skipped', () => {
  it('delivers at the first instant after the gap, not twice the next day (Pacific/Apia, 2011-12-30)', () => {
    // Samoa jumped from 29 Dec 24:00 (-10) straight to 31 Dec 00:00 (+14) at 10:00Z.
    const daily = schedule('daily', 'Pacific/Apia', 9);
    const dues = periodsDue(daily, at('2011-12-29T12:00:00Z'), at('2011-12-31T12:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual([
      '2011-12-29T19:00:00.000Z',
      '2011-12-30T10:00:00.000Z',
      '2011-12-30T19:00:00.000Z',
    ]);
  });
});
