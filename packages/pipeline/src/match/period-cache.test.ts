import { describe, expect, it } from 'vitest';
import { periodContaining, type Schedule } from '@notify/core';
import { PeriodCache } from './period-cache';

const daily: Schedule = { frequency: 'daily', deliveryHour: 9, deliveryDayOfWeek: null, timeZone: 'America/New_York' };
const hourly: Schedule = { frequency: 'hourly', deliveryHour: null, deliveryDayOfWeek: null, timeZone: 'Asia/Kathmandu' };

describe('PeriodCache', () => {
  it('answers what periodContaining answers, at every instant, across period ends and DST', () => {
    const cache = new PeriodCache();
    // Every 7 minutes across the end of US daylight saving time (2026-11-01) and a few days around it.
    for (let t = Date.parse('2026-10-30T00:00:00Z'); t < Date.parse('2026-11-04T00:00:00Z'); t += 7 * 60_000) {
      for (const schedule of [daily, hourly]) expect(cache.containing(schedule, new Date(t))).toEqual(periodContaining(schedule, new Date(t)));
    }
  });

  it('reuses a period until it ends, and works out the next one then', () => {
    const cache = new PeriodCache();
    const first = cache.containing(hourly, new Date('2026-11-22T10:20:00Z'));
    expect(cache.containing(hourly, new Date('2026-11-22T10:40:00Z'))).toBe(first);
    const next = cache.containing(hourly, first.end);
    expect(next).not.toBe(first);
    expect(next.start).toEqual(first.end);
    // An earlier instant (a clock set back) is not answered from a later period.
    expect(cache.containing(hourly, new Date(first.start.getTime() - 1)).end).toEqual(first.start);
  });

  it('stays bounded', () => {
    const cache = new PeriodCache(10);
    for (let hour = 0; hour < 24; hour++) cache.containing({ ...daily, deliveryHour: hour }, new Date());
    expect((cache as unknown as { periods: Map<string, unknown> }).periods.size).toBeLessThanOrEqual(10);
  });
});
