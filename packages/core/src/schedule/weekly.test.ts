import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

// 2026-05-11 is a Monday, 2026-05-17 a Sunday.
describe('weekly', () => {
  it('delivers on Monday for day 0', () => {
    const monday = schedule('weekly', 'UTC', 9, 0);
    expect(nextDeliveryAt(monday, at('2026-05-10T12:00:00Z'))).toEqual(at('2026-05-11T09:00:00Z'));
    expect(nextDeliveryAt(monday, at('2026-05-11T09:00:00Z'))).toEqual(at('2026-05-18T09:00:00Z'));
    expect(periodContaining(monday, at('2026-05-13T00:00:00Z'))).toMatchObject({
      start: at('2026-05-11T09:00:00Z'),
      end: at('2026-05-18T09:00:00Z'),
      key: '20260518T090000Z',
    });
  });

  it('delivers on Sunday for day 6', () => {
    const sunday = schedule('weekly', 'UTC', 18, 6);
    expect(nextDeliveryAt(sunday, at('2026-05-11T00:00:00Z'))).toEqual(at('2026-05-17T18:00:00Z'));
    expect(nextDeliveryAt(sunday, at('2026-05-17T17:59:59Z'))).toEqual(at('2026-05-17T18:00:00Z'));
    expect(nextDeliveryAt(sunday, at('2026-05-17T18:00:00Z'))).toEqual(at('2026-05-24T18:00:00Z'));
    expect(periodContaining(sunday, at('2026-05-17T18:00:00Z'))).toMatchObject({
      start: at('2026-05-17T18:00:00Z'),
      end: at('2026-05-24T18:00:00Z'),
    });
  });

  it('uses every day of the week in ISO order', () => {
    const after = at('2026-05-10T23:00:00Z'); // Sunday night
    const days = [0, 1, 2, 3, 4, 5, 6].map((day) => nextDeliveryAt(schedule('weekly', 'UTC', 9, day), after).getUTCDate());
    expect(days).toEqual([11, 12, 13, 14, 15, 16, 17]);
  });

  it('defaults to Monday 09:00', () => {
    expect(nextDeliveryAt(schedule('weekly', 'UTC'), at('2026-05-12T00:00:00Z'))).toEqual(at('2026-05-18T09:00:00Z'));
  });

  it('reads the weekday in the organization time zone', () => {
    // Monday 08:00 in Berlin (CEST) is Monday 06:00Z; Sunday 23:00 in Honolulu is Monday 09:00Z.
    expect(nextDeliveryAt(schedule('weekly', 'Europe/Berlin', 8, 0), at('2026-05-10T12:00:00Z'))).toEqual(at('2026-05-11T06:00:00Z'));
    expect(nextDeliveryAt(schedule('weekly', 'Pacific/Honolulu', 23, 6), at('2026-05-10T12:00:00Z'))).toEqual(at('2026-05-11T09:00:00Z'));
  });
});
