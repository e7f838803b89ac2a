import { describe, expect, it } from 'vitest';
import { periodByKey, periodContaining } from './index';
import { at, schedule } from './test-support';

describe('period keys', () => {
  it('are the basic ISO UTC instant of dueAt', () => {
    expect(periodContaining(schedule('daily', 'America/New_York', 9), at('2026-11-22T12:00:00Z')).key).toBe('20261122T140000Z');
    expect(periodContaining(schedule('hourly', 'Asia/Kathmandu'), at('2026-11-22T12:00:00Z')).key).toBe('20261122T121500Z');
  });

  it.each([
    ['hourly', 'Asia/Kathmandu', null, null],
    ['daily', 'America/New_York', 2, null],
    ['weekly', 'Pacific/Kiritimati', 9, 6],
    ['monthly', 'Europe/Berlin', 0, null],
  ] as const)('round-trip for %s in %s', (frequency, zone, hour, day) => {
    const rule = schedule(frequency, zone, hour, day);
    for (const instant of ['2026-03-08T06:59:59Z', '2026-11-01T05:30:00Z', '2028-02-29T12:00:00Z', '2026-12-31T23:59:59.999Z']) {
      const period = periodContaining(rule, at(instant));
      expect(periodByKey(rule, period.key)).toEqual(period);
    }
  });

  it.each(['', '20261122T140000', '2026-11-22T14:00:00.000Z', '20261122t140000z', '20261322T140000Z', '20260230T090000Z', '20261122T240000Z', ' 20261122T140000Z'])(
    'reject the malformed key %j',
    (key) => expect(periodByKey(schedule('daily', 'UTC', 14), key)).toBeNull(),
  );

  it('reject a well-formed key that is not a delivery instant of the schedule', () => {
    expect(periodByKey(schedule('daily', 'UTC', 14), '20261122T150000Z')).toBeNull();
    expect(periodByKey(schedule('weekly', 'UTC', 14, 0), '20261122T140000Z')).toBeNull(); // a Sunday
    expect(periodByKey(schedule('weekly', 'UTC', 14, 6), '20261122T140000Z')).not.toBeNull();
  });
});
