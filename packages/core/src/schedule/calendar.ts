import { DateTime } from 'luxon';
import { resolveWallTime } from './wall-clock';

export type CalendarFrequency = 'daily' | 'weekly' | 'monthly';

export interface CalendarSlot {
  frequency: CalendarFrequency;
  hour: number;
  /** 0 = Monday … 6 = Sunday; read only for weekly. */
  dayOfWeek: number;
  timeZone: string;
}

// Local calendar dates are held as midnight in a UTC DateTime so that stepping by days
// and months is plain calendar arithmetic, untouched by any zone's DST.
type LocalDate = DateTime;

// A delivery slot lands on or within a day after its local date (a skipped calendar day
// pushes it to the next midnight), so one day of margin around the instant's own local
// date is enough; the step cap only guards against a logic error looping forever.
const MAX_STEPS = 8;

function localDateOf(ms: number, zone: string): LocalDate {
  const local = DateTime.fromMillis(ms, { zone });
  return DateTime.utc(local.year, local.month, local.day);
}

function firstSlotDateOnOrAfter(slot: CalendarSlot, date: LocalDate): LocalDate {
  switch (slot.frequency) {
    case 'daily':
      return date;
    case 'weekly':
      return date.plus({ days: (slot.dayOfWeek + 1 - date.weekday + 7) % 7 });
    case 'monthly':
      return date.day === 1 ? date : date.startOf('month').plus({ months: 1 });
  }
}

function lastSlotDateOnOrBefore(slot: CalendarSlot, date: LocalDate): LocalDate {
  switch (slot.frequency) {
    case 'daily':
      return date;
    case 'weekly':
      return date.minus({ days: (date.weekday - (slot.dayOfWeek + 1) + 7) % 7 });
    case 'monthly':
      return date.startOf('month');
  }
}

function stepOf(slot: CalendarSlot): { days: number } | { months: number } {
  switch (slot.frequency) {
    case 'daily':
      return { days: 1 };
    case 'weekly':
      return { days: 7 };
    case 'monthly':
      return { months: 1 };
  }
}

function slotInstant(slot: CalendarSlot, date: LocalDate): number {
  return resolveWallTime(slot.timeZone, { year: date.year, month: date.month, day: date.day, hour: slot.hour });
}

/** First slot instant strictly after `after`. */
export function nextSlotAfter(slot: CalendarSlot, after: number): number {
  let date = firstSlotDateOnOrAfter(slot, localDateOf(after, slot.timeZone).minus({ days: 1 }));
  for (let step = 0; step < MAX_STEPS; step++) {
    const instant = slotInstant(slot, date);
    if (instant > after) return instant;
    date = date.plus(stepOf(slot));
  }
  throw new Error(`No ${slot.frequency} delivery found after ${new Date(after).toISOString()}`);
}

/** Last slot instant at or before `at`. */
export function lastSlotAtOrBefore(slot: CalendarSlot, at: number): number {
  let date = lastSlotDateOnOrBefore(slot, localDateOf(at, slot.timeZone).plus({ days: 1 }));
  for (let step = 0; step < MAX_STEPS; step++) {
    const instant = slotInstant(slot, date);
    if (instant <= at) return instant;
    date = date.minus(stepOf(slot));
  }
  throw new Error(`No ${slot.frequency} delivery found before ${new Date(at).toISOString()}`);
}
