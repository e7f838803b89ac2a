import { nextSlotAfter, lastSlotAtOrBefore, type CalendarSlot } from './calendar';
import { firstLocalHourFrom, lastLocalHourUntil } from './hourly';
import { normalizeSchedule } from './normalize';
import { assertTimeZone } from './time-zone';
import type { Schedule } from './types';

type DeliveryRule = { kind: 'hourly'; timeZone: string } | ({ kind: 'calendar' } & CalendarSlot);

function deliveryRule(schedule: Schedule): DeliveryRule {
  assertTimeZone(schedule.timeZone);
  const settings = normalizeSchedule(schedule);
  switch (settings.frequency) {
    case 'instant':
      // Instant rules are delivered per event (with burst coalescing elsewhere), never per period.
      throw new Error('An instant schedule has no delivery periods');
    case 'hourly':
      return { kind: 'hourly', timeZone: schedule.timeZone };
    case 'daily':
    case 'weekly':
    case 'monthly':
      return {
        kind: 'calendar',
        frequency: settings.frequency,
        // normalizeSchedule fills the hour for every calendar frequency and the day for weekly.
        hour: settings.deliveryHour ?? 0,
        dayOfWeek: settings.deliveryDayOfWeek ?? 0,
        timeZone: schedule.timeZone,
      };
  }
}

export function toMillis(date: Date, name: string): number {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new Error(`Invalid ${name}: expected a valid Date`);
  return ms;
}

/** A schedule validated once, answering delivery-instant questions in epoch milliseconds. */
export interface DeliveryClock {
  nextAfter(ms: number): number;
  lastAtOrBefore(ms: number): number;
}

export function deliveryClock(schedule: Schedule): DeliveryClock {
  const rule = deliveryRule(schedule);
  if (rule.kind === 'hourly') {
    return {
      nextAfter: (ms) => firstLocalHourFrom(rule.timeZone, ms + 1),
      lastAtOrBefore: (ms) => lastLocalHourUntil(rule.timeZone, ms),
    };
  }
  return {
    nextAfter: (ms) => nextSlotAfter(rule, ms),
    lastAtOrBefore: (ms) => lastSlotAtOrBefore(rule, ms),
  };
}
