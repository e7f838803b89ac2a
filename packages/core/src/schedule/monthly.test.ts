import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

describe('monthly', () => {
  const monthly = schedule('monthly', 'UTC', 9);

  it('delivers on the 1st after the month end', () => {
    expect(nextDeliveryAt(monthly, at('2026-05-31T23:59:59Z'))).toEqual(at('2026-06-01T09:00:00Z'));
    expect(nextDeliveryAt(monthly, at('2026-06-01T08:00:00Z'))).toEqual(at('2026-06-01T09:00:00Z'));
    expect(nextDeliveryAt(monthly, at('2026-06-01T09:00:00Z'))).toEqual(at('2026-07-01T09:00:00Z'));
  });

  it('crosses the year end from December to January', () => {
    expect(periodContaining(monthly, at('2026-12-31T12:00:00Z'))).toEqual({
      key: '20270101T090000Z',
      start: at('2026-12-01T09:00:00Z'),
      end: at('2027-01-01T09:00:00Z'),
      dueAt: at('2027-01-01T09:00:00Z'),
    });
  });

  it('spans February in a common year', () => {
    const period = periodContaining(monthly, at('2026-02-28T12:00:00Z'));
    expect(period.start).toEqual(at('2026-02-01T09:00:00Z'));
    expect(period.end).toEqual(at('2026-03-01T09:00:00Z'));
    expect(period.end.getTime() - period.start.getTime()).toBe(28 * 86_400_000);
  });

  it('includes 29 February in a leap year', () => {
    const period = periodContaining(monthly, at('2028-02-29T23:00:00Z'));
    expect(period.start).toEqual(at('2028-02-01T09:00:00Z'));
    expect(period.end).toEqual(at('2028-03-01T09:00:00Z'));
    expect(period.end.getTime() - period.start.getTime()).toBe(29 * 86_400_000);
  });

  it('ignores a stored day of week', () => {
    expect(nextDeliveryAt(schedule('monthly', 'UTC', 9, 3), at('2026-05-02T00:00:00Z'))).toEqual(at('2026-06-01T09:00:00Z'));
  });

  it('reads the 1st in the organization time zone', () => {
    // 1 June 00:00 in Berlin (CEST) is 31 May 22:00Z.
    expect(nextDeliveryAt(schedule('monthly', 'Europe/Berlin', 0), at('2026-05-15T00:00:00Z'))).toEqual(at('2026-05-31T22:00:00Z'));
  });
});
