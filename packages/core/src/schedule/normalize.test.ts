import { describe, expect, it } from 'vitest';
import { normalizeSchedule } from './index';

describe('normalizeSchedule', () => {
  it('defaults to an instant rule without a delivery slot', () => {
    expect(normalizeSchedule({})).toEqual({ frequency: 'instant', deliveryHour: null, deliveryDayOfWeek: null });
  });

  it.each(['instant', 'hourly'] as const)('clears both fields for %s', (frequency) => {
    expect(normalizeSchedule({ frequency, deliveryHour: 7, deliveryDayOfWeek: 3 })).toEqual({
      frequency,
      deliveryHour: null,
      deliveryDayOfWeek: null,
    });
  });

  it.each(['daily', 'monthly'] as const)('defaults %s to 09:00 and keeps a given day of week', (frequency) => {
    expect(normalizeSchedule({ frequency })).toEqual({ frequency, deliveryHour: 9, deliveryDayOfWeek: null });
    expect(normalizeSchedule({ frequency, deliveryHour: null, deliveryDayOfWeek: 4 })).toEqual({
      frequency,
      deliveryHour: 9,
      deliveryDayOfWeek: 4,
    });
    expect(normalizeSchedule({ frequency, deliveryHour: 0 })).toEqual({ frequency, deliveryHour: 0, deliveryDayOfWeek: null });
  });

  it('defaults weekly to Monday 09:00', () => {
    expect(normalizeSchedule({ frequency: 'weekly' })).toEqual({ frequency: 'weekly', deliveryHour: 9, deliveryDayOfWeek: 0 });
    expect(normalizeSchedule({ frequency: 'weekly', deliveryHour: 23, deliveryDayOfWeek: 6 })).toEqual({
      frequency: 'weekly',
      deliveryHour: 23,
      deliveryDayOfWeek: 6,
    });
  });

  it.each([-1, 24, 9.5, Number.NaN])('rejects delivery hour %s', (deliveryHour) => {
    expect(() => normalizeSchedule({ frequency: 'daily', deliveryHour })).toThrow(/delivery hour/);
  });

  it.each([-1, 7, 1.5])('rejects delivery day of week %s', (deliveryDayOfWeek) => {
    expect(() => normalizeSchedule({ frequency: 'weekly', deliveryDayOfWeek })).toThrow(/day of week/);
  });

  it('rejects an unknown frequency', () => {
    expect(() => normalizeSchedule({ frequency: 'yearly' as never })).toThrow(/frequency/);
  });
});
