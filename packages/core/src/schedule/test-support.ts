import type { Frequency } from '../scopes';
import type { Schedule } from './types';

export function schedule(
  frequency: Frequency,
  timeZone = 'UTC',
  deliveryHour: number | null = null,
  deliveryDayOfWeek: number | null = null,
): Schedule {
  return { frequency, timeZone, deliveryHour, deliveryDayOfWeek };
}

export const at = (iso: string): Date => new Date(iso);

export const isoOf = (dates: Date[]): string[] => dates.map((date) => date.toISOString());
