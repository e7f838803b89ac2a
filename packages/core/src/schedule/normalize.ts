import { FREQUENCIES, type Frequency } from '../scopes';
import type { ScheduleSettings, ScheduleSettingsInput } from './types';

export const DEFAULT_FREQUENCY: Frequency = 'instant';
export const DEFAULT_DELIVERY_HOUR = 9;
/** Monday; days count 0 = Monday … 6 = Sunday (ISO order). */
export const DEFAULT_DELIVERY_DAY_OF_WEEK = 0;

export function assertFrequency(frequency: unknown): asserts frequency is Frequency {
  if (!(FREQUENCIES as readonly unknown[]).includes(frequency)) {
    throw new Error(`Invalid frequency ${JSON.stringify(frequency)}: expected one of ${FREQUENCIES.join(', ')}`);
  }
}

export function assertDeliveryHour(hour: unknown): asserts hour is number {
  if (!Number.isInteger(hour) || (hour as number) < 0 || (hour as number) > 23) {
    throw new Error(`Invalid delivery hour ${String(hour)}: expected an integer 0–23`);
  }
}

export function assertDeliveryDayOfWeek(day: unknown): asserts day is number {
  if (!Number.isInteger(day) || (day as number) < 0 || (day as number) > 6) {
    throw new Error(`Invalid delivery day of week ${String(day)}: expected an integer 0 (Monday) – 6 (Sunday)`);
  }
}

/**
 * Applies the product defaults and validates what is given (null and undefined both mean
 * "use the default"). Instant and hourly have no delivery slot, so both fields become null.
 * Daily and monthly keep a given day of week, so switching a rule back to weekly restores
 * the user's choice; the maths ignores it.
 */
export function normalizeSchedule(input: ScheduleSettingsInput): ScheduleSettings {
  const frequency = input.frequency ?? DEFAULT_FREQUENCY;
  assertFrequency(frequency);
  const hour = input.deliveryHour ?? null;
  const day = input.deliveryDayOfWeek ?? null;
  if (hour !== null) assertDeliveryHour(hour);
  if (day !== null) assertDeliveryDayOfWeek(day);
  switch (frequency) {
    case 'instant':
    case 'hourly':
      return { frequency, deliveryHour: null, deliveryDayOfWeek: null };
    case 'daily':
    case 'monthly':
      return { frequency, deliveryHour: hour ?? DEFAULT_DELIVERY_HOUR, deliveryDayOfWeek: day };
    case 'weekly':
      return {
        frequency,
        deliveryHour: hour ?? DEFAULT_DELIVERY_HOUR,
        deliveryDayOfWeek: day ?? DEFAULT_DELIVERY_DAY_OF_WEEK,
      };
  }
}
