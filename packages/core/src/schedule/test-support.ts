import type { Frequency } from '../scopes';
import { periodContaining } from './period';
import type { Period, Schedule } from './types';

export function schedule(
  frequency: Frequency,
  timeZone = 'UTC',
  deliveryHour: number | null = null,
  deliveryDayOfWeek: number | null = null,
): Schedule {
  return { frequency, timeZone, deliveryHour, deliveryDayOfWeek };
}

export const at = (iso: string): Date => new Date(iso);

/** The periods due in (from, to], oldest first, walked as the match stage meets them: each from the end of the last. */
export function periodsDue(rule: Schedule, from: Date, to: Date): Period[] {
  const periods: Period[] = [];
  for (let period = periodContaining(rule, from); period.end <= to; period = periodContaining(rule, period.end)) periods.push(period);
  return periods;
}

/** The first delivery instant strictly after `after`: the end of the period containing it. */
export const nextDeliveryAt = (rule: Schedule, after: Date): Date => periodContaining(rule, after).dueAt;

export const isoOf = (dates: Date[]): string[] => dates.map((date) => date.toISOString());
