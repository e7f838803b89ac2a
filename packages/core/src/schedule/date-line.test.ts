import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

describe('zones where the local date differs from the UTC date', () => {
  it('Pacific/Kiritimati (UTC+14) delivers the day before in UTC', () => {
    // 2026-05-11 09:00 local is 2026-05-10 19:00Z.
    expect(nextDeliveryAt(schedule('daily', 'Pacific/Kiritimati', 9), at('2026-05-10T12:00:00Z'))).toEqual(at('2026-05-10T19:00:00Z'));
    // Monday 2026-05-11 09:00 local falls on Sunday in UTC.
    expect(nextDeliveryAt(schedule('weekly', 'Pacific/Kiritimati', 9, 0), at('2026-05-09T00:00:00Z'))).toEqual(at('2026-05-10T19:00:00Z'));
    expect(periodContaining(schedule('monthly', 'Pacific/Kiritimati', 9), at('2026-03-01T12:00:00Z'))).toEqual({
      key: '20260331T190000Z',
      start: at('2026-02-28T19:00:00Z'),
      end: at('2026-03-31T19:00:00Z'),
      dueAt: at('2026-03-31T19:00:00Z'),
    });
  });

  it('Pacific/Honolulu (UTC-10) delivers the day after in UTC', () => {
    // 2026-05-10 20:00 local is 2026-05-11 06:00Z.
    expect(nextDeliveryAt(schedule('daily', 'Pacific/Honolulu', 20), at('2026-05-10T12:00:00Z'))).toEqual(at('2026-05-11T06:00:00Z'));
    // Sunday 2026-05-17 22:00 local is Monday 08:00Z.
    expect(nextDeliveryAt(schedule('weekly', 'Pacific/Honolulu', 22, 6), at('2026-05-12T00:00:00Z'))).toEqual(at('2026-05-18T08:00:00Z'));
    // At 05:00Z on 1 January it is still 31 December 19:00 locally.
    expect(periodContaining(schedule('monthly', 'Pacific/Honolulu', 9), at('2027-01-01T05:00:00Z'))).toMatchObject({
      start: at('2026-12-01T19:00:00Z'),
      end: at('2027-01-01T19:00:00Z'),
    });
  });

  it('hourly deliveries in whole-hour zones fall on UTC hours', () => {
    expect(nextDeliveryAt(schedule('hourly', 'Pacific/Kiritimati'), at('2026-05-10T12:34:00Z'))).toEqual(at('2026-05-10T13:00:00Z'));
    expect(nextDeliveryAt(schedule('hourly', 'Pacific/Honolulu'), at('2026-05-10T12:34:00Z'))).toEqual(at('2026-05-10T13:00:00Z'));
  });
});
