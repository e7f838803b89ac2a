import { deliveryClock, toMillis, type DeliveryClock } from './delivery';
import { periodKeys } from './period-key';
import type { Period, Schedule } from './types';

function period(start: number, end: number): Period {
  // Separate Date objects so a caller mutating one field cannot shift another.
  return { key: periodKeys.digest(end), start: new Date(start), end: new Date(end), dueAt: new Date(end) };
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
