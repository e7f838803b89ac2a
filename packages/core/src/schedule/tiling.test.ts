import { describe, expect, it } from 'vitest';
import type { Frequency } from '../scopes';
import { periodContaining, type Period } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

const YEAR_START = at('2026-01-01T00:00:00Z');
const YEAR_END = at('2027-01-01T00:00:00Z');

function periodsOfYear(frequency: Frequency): Period[] {
  const berlin = schedule(frequency, 'Europe/Berlin', 2, 6);
  const periods = [periodContaining(berlin, YEAR_START)];
  for (let last = periods[0]!; last.end < YEAR_END; last = periods[periods.length - 1]!) {
    periods.push(periodContaining(berlin, last.end));
  }
  return periods;
}

// Hour 2 and Sunday put the daily and weekly slots inside both Berlin transitions (29 March, 25 October).
// Counts are the periods needed to cover 2026 in UTC, so they include the one straddling each end.
describe('periods tile a whole year in Europe/Berlin', () => {
  it.each([
    ['hourly', 8760],
    ['daily', 366],
    ['weekly', 53],
    ['monthly', 13],
  ] as const)('%s', (frequency, expectedCount) => {
    const berlin = schedule(frequency, 'Europe/Berlin', 2, 6);
    const periods = periodsOfYear(frequency);
    expect(periods).toHaveLength(expectedCount);
    for (let i = 0; i < periods.length; i++) {
      const period = periods[i]!;
      expect(period.start < period.end).toBe(true);
      expect(period.dueAt).toEqual(period.end);
      if (i > 0) expect(period.start).toEqual(periods[i - 1]!.end);
    }
    const keys = new Set(periods.map((period) => period.key));
    expect(keys.size).toBe(periods.length);
    // Spot checks are enough; the hourly year alone has 8760 periods.
    for (const period of periods.filter((_, i) => i % Math.ceil(periods.length / 60) === 0)) {
      expect(periodContaining(berlin, new Date(period.end.getTime() - 1))).toEqual(period);
      expect(nextDeliveryAt(berlin, period.start)).toEqual(period.end);
    }
  });
});
