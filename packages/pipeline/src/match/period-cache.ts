import { periodContaining, type Period, type Schedule } from '@notify/core';

/**
 * The period containing an instant, per schedule, remembered until the period ends: tens of
 * thousands of rules share a few thousand schedules, and the period maths (time-zone offsets
 * through Intl) is the match stage's costliest step. A period is a pure function of its schedule and
 * the instant, so a remembered one is right for every instant between its start and its end.
 */
export class PeriodCache {
  private readonly periods = new Map<string, Period>();

  constructor(private readonly maxEntries = 50_000) {}

  /** The period of `schedule` containing `at`, reckoned in `timeZone` (a member's; by default the schedule's own). */
  containing(schedule: Schedule, at: Date, timeZone = schedule.timeZone): Period {
    const key = `${schedule.frequency}|${schedule.deliveryHour}|${schedule.deliveryDayOfWeek}|${timeZone}`;
    const time = at.getTime();
    const known = this.periods.get(key);
    if (known && known.start.getTime() <= time && time < known.end.getTime()) return known;
    const period = periodContaining(timeZone === schedule.timeZone ? schedule : { ...schedule, timeZone }, at);
    if (this.periods.size >= this.maxEntries) this.periods.clear();
    this.periods.set(key, period);
    return period;
  }
}
