import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { periodContaining, type Schedule } from './index';

// Zones chosen for awkward rules: half- and quarter-hour offsets, 30-minute DST, DST at
// midnight, the date line, and a skipped calendar day.
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'America/Santiago',
  'America/Havana',
  'America/St_Johns',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Tehran',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Pacific/Apia',
  'Pacific/Kiritimati',
  'Pacific/Honolulu',
];

const schedules = fc.record<Schedule>({
  frequency: fc.constantFrom('hourly', 'daily', 'weekly', 'monthly'),
  deliveryHour: fc.integer({ min: 0, max: 23 }),
  deliveryDayOfWeek: fc.integer({ min: 0, max: 6 }),
  timeZone: fc.constantFrom(...ZONES),
});
const instants = fc.date({ min: new Date('1995-01-01T00:00:00Z'), max: new Date('2040-01-01T00:00:00Z'), noInvalidDate: true });

const offsetChangesAt = (zone: string, ms: number): boolean =>
  IANAZone.create(zone).offset(ms - 1) !== IANAZone.create(zone).offset(ms);

function isOnSlot(schedule: Schedule, ms: number): boolean {
  const local = DateTime.fromMillis(ms, { zone: schedule.timeZone });
  if (local.minute !== 0 || local.second !== 0 || local.millisecond !== 0) return false;
  if (schedule.frequency === 'hourly') return true;
  if (local.hour !== schedule.deliveryHour) return false;
  if (schedule.frequency === 'weekly') return local.weekday === (schedule.deliveryDayOfWeek ?? 0) + 1;
  if (schedule.frequency === 'monthly') return local.day === 1;
  return true;
}

describe('schedule properties', () => {
  it('periods contain their instant, tile, round-trip and end on a delivery slot', () => {
    fc.assert(
      fc.property(schedules, instants, (schedule, instant) => {
        const period = periodContaining(schedule, instant);
        expect(period.start.getTime()).toBeLessThanOrEqual(instant.getTime());
        expect(period.end.getTime()).toBeGreaterThan(instant.getTime());
        expect(period.dueAt).toEqual(period.end);
        expect(periodContaining(schedule, period.end).start).toEqual(period.end);
        expect(periodContaining(schedule, new Date(period.start.getTime() - 1)).end).toEqual(period.start);
        // A slot whose wall time does not exist is delivered at the transition that skipped it.
        const end = period.end.getTime();
        expect(isOnSlot(schedule, end) || offsetChangesAt(schedule.timeZone, end)).toBe(true);
        // A slot whose wall time occurs twice is delivered at its first occurrence only.
        if (schedule.frequency !== 'hourly') {
          for (const earlier of [end - 30 * 60_000, end - 60 * 60_000]) {
            expect(earlier > period.start.getTime() && isOnSlot(schedule, earlier)).toBe(false);
          }
        }
      }),
      { numRuns: 400, seed: 20261122 },
    );
  });
});
