import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

describe('daily', () => {
  const daily = schedule('daily', 'UTC', 9);

  it('delivers today when the hour is still ahead, tomorrow otherwise', () => {
    expect(nextDeliveryAt(daily, at('2026-05-10T08:59:59Z'))).toEqual(at('2026-05-10T09:00:00Z'));
    expect(nextDeliveryAt(daily, at('2026-05-10T09:00:00Z'))).toEqual(at('2026-05-11T09:00:00Z'));
    expect(nextDeliveryAt(daily, at('2026-05-10T23:30:00Z'))).toEqual(at('2026-05-11T09:00:00Z'));
  });

  it('covers the 24 hours since the previous delivery', () => {
    expect(periodContaining(daily, at('2026-05-10T03:00:00Z'))).toEqual({
      key: '20260510T090000Z',
      start: at('2026-05-09T09:00:00Z'),
      end: at('2026-05-10T09:00:00Z'),
      dueAt: at('2026-05-10T09:00:00Z'),
    });
  });

  it('puts a match made at the delivery instant into the next period', () => {
    const period = periodContaining(daily, at('2026-05-10T09:00:00Z'));
    expect(period.start).toEqual(at('2026-05-10T09:00:00Z'));
    expect(period.dueAt).toEqual(at('2026-05-11T09:00:00Z'));
  });

  it('defaults a missing delivery hour to 09:00', () => {
    expect(nextDeliveryAt(schedule('daily', 'UTC', null), at('2026-05-10T00:00:00Z'))).toEqual(at('2026-05-10T09:00:00Z'));
  });

  it('reads the hour in the organization time zone', () => {
    // 09:00 CEST is 07:00Z.
    expect(nextDeliveryAt(schedule('daily', 'Europe/Berlin', 9), at('2026-05-10T07:30:00Z'))).toEqual(at('2026-05-11T07:00:00Z'));
    expect(nextDeliveryAt(schedule('daily', 'Asia/Kathmandu', 9), at('2026-05-10T00:00:00Z'))).toEqual(at('2026-05-10T03:15:00Z'));
  });

  it('ignores a stored day of week', () => {
    expect(nextDeliveryAt(schedule('daily', 'UTC', 9, 4), at('2026-05-10T10:00:00Z'))).toEqual(at('2026-05-11T09:00:00Z'));
  });

  it('supports midnight and 23:00', () => {
    expect(nextDeliveryAt(schedule('daily', 'UTC', 0), at('2026-12-31T12:00:00Z'))).toEqual(at('2027-01-01T00:00:00Z'));
    expect(nextDeliveryAt(schedule('daily', 'UTC', 23), at('2026-12-31T23:00:00Z'))).toEqual(at('2027-01-01T23:00:00Z'));
  });
});
