import { deliveryClock, toMillis, type DeliveryClock } from './delivery';
import { parsePeriodKey, periodKey } from './period-key';
import type { Period, Schedule } from './types';

export const DEFAULT_DUE_PERIODS_LIMIT = 100;

function period(start: number, end: number): Period {
  // Separate Date objects so a caller mutating one field cannot shift another.
  return { key: periodKey(end), start: new Date(start), end: new Date(end), dueAt: new Date(end) };
}

function periodAt(clock: DeliveryClock, at: number): Period {
  return period(clock.lastAtOrBefore(at), clock.nextAfter(at));
}

/**
 * The period whose delivery carries a match made at `at` (start <= at < end): a match at
 * a delivery instant belongs to the next period. Throws for instant schedules.
 */
export function periodContaining(schedule: Schedule, at: Date): Period {
  return periodAt(deliveryClock(schedule), toMillis(at, 'at'));
}

/** The period a key names, or null if the key is malformed or not a delivery instant of this schedule. */
export function periodByKey(schedule: Schedule, key: string): Period | null {
  const clock = deliveryClock(schedule);
  const dueAt = parsePeriodKey(key);
  if (dueAt === null) return null;
  const candidate = periodAt(clock, dueAt - 1);
  return candidate.end.getTime() === dueAt ? candidate : null;
}

/**
 * Periods with dueAt in (from, now], oldest first, at most `limit` of them. Keeping the
 * oldest makes the result a cursor: after a long outage the caller passes the last
 * dueAt as the next `from` and nothing is skipped.
 */
export function duePeriods(schedule: Schedule, from: Date, now: Date, limit: number = DEFAULT_DUE_PERIODS_LIMIT): Period[] {
  const clock = deliveryClock(schedule);
  const fromMs = toMillis(from, 'from');
  const nowMs = toMillis(now, 'now');
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`Invalid limit ${String(limit)}: expected a non-negative integer`);
  const periods: Period[] = [];
  let current = periodAt(clock, fromMs);
  while (periods.length < limit && current.end.getTime() <= nowMs) {
    periods.push(current);
    const start = current.end.getTime();
    current = period(start, clock.nextAfter(start));
  }
  return periods;
}
