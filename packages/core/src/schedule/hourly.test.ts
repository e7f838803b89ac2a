import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, isoOf, nextDeliveryAt, periodsDue, schedule } from './test-support';

const HOUR = 3_600_000;

function deliveriesBetween(timeZone: string, from: string, to: string): Date[] {
  return periodsDue(schedule('hourly', timeZone), at(from), at(to)).map((period) => period.dueAt);
}

function expectEveryUtcHour(deliveries: Date[]): void {
  for (let i = 1; i < deliveries.length; i++) {
    expect(deliveries[i]!.getTime() - deliveries[i - 1]!.getTime()).toBe(HOUR);
  }
}

describe('hourly', () => {
  it('delivers at minute 0 of the next hour, covering the hour before', () => {
    const hourly = schedule('hourly');
    expect(nextDeliveryAt(hourly, at('2026-05-10T13:27:00Z'))).toEqual(at('2026-05-10T14:00:00Z'));
    expect(periodContaining(hourly, at('2026-05-10T13:27:00Z'))).toEqual({
      key: '20260510T140000Z',
      start: at('2026-05-10T13:00:00Z'),
      end: at('2026-05-10T14:00:00Z'),
      dueAt: at('2026-05-10T14:00:00Z'),
    });
  });

  it('puts a match exactly on the hour into the next period', () => {
    const period = periodContaining(schedule('hourly'), at('2026-05-10T14:00:00Z'));
    expect(period.start).toEqual(at('2026-05-10T14:00:00Z'));
    expect(period.end).toEqual(at('2026-05-10T15:00:00Z'));
    expect(nextDeliveryAt(schedule('hourly'), at('2026-05-10T14:00:00Z'))).toEqual(at('2026-05-10T15:00:00Z'));
  });

  it('ignores delivery hour and day for hourly rules', () => {
    expect(nextDeliveryAt(schedule('hourly', 'UTC', 5, 3), at('2026-05-10T13:27:00Z'))).toEqual(at('2026-05-10T14:00:00Z'));
  });

  it.each([
    ['America/New_York', '2026-03-08T00:00:00Z'],
    ['Europe/Berlin', '2026-03-29T00:00:00Z'],
  ])('has no missing or duplicate UTC hour on a spring-forward night in %s', (zone, day) => {
    const start = at(day);
    const deliveries = deliveriesBetween(zone, day, new Date(start.getTime() + 24 * HOUR).toISOString());
    expect(deliveries).toHaveLength(24);
    expectEveryUtcHour(deliveries);
  });

  it('delivers 23 times on the New York spring-forward local day', () => {
    // 2026-03-08 local midnight is 05:00Z (EST), the next local midnight 04:00Z (EDT).
    const deliveries = deliveriesBetween('America/New_York', '2026-03-08T04:59:59Z', '2026-03-09T03:59:59Z');
    expect(deliveries).toHaveLength(23);
    expectEveryUtcHour(deliveries);
  });

  it('delivers 25 times on the New York fall-back local day, both 01:00s included', () => {
    // Local 2026-11-01 00:00 is 04:00Z (EDT); local 23:00 is 04:00Z the next day (EST).
    const deliveries = deliveriesBetween('America/New_York', '2026-11-01T03:59:59Z', '2026-11-02T04:59:59Z');
    expect(deliveries).toHaveLength(25);
    expectEveryUtcHour(deliveries);
    expect(isoOf(deliveries)).toContain('2026-11-01T05:00:00.000Z');
    expect(isoOf(deliveries)).toContain('2026-11-01T06:00:00.000Z');
  });

  it('delivers 25 times on the Berlin fall-back local day', () => {
    const deliveries = deliveriesBetween('Europe/Berlin', '2026-10-24T21:59:59Z', '2026-10-25T22:59:59Z');
    expect(deliveries).toHaveLength(25);
    expectEveryUtcHour(deliveries);
  });

  it('follows local minute 0 in Asia/Kathmandu (+05:45)', () => {
    const kathmandu = schedule('hourly', 'Asia/Kathmandu');
    expect(nextDeliveryAt(kathmandu, at('2026-05-10T13:00:00Z'))).toEqual(at('2026-05-10T13:15:00Z'));
    expect(nextDeliveryAt(kathmandu, at('2026-05-10T13:15:00Z'))).toEqual(at('2026-05-10T14:15:00Z'));
    expect(periodContaining(kathmandu, at('2026-05-10T13:14:59.999Z'))).toMatchObject({
      start: at('2026-05-10T12:15:00Z'),
      end: at('2026-05-10T13:15:00Z'),
      key: '20260510T131500Z',
    });
  });

  it('follows local minute 0 in Asia/Kolkata (+05:30)', () => {
    const deliveries = deliveriesBetween('Asia/Kolkata', '2026-05-10T00:00:00Z', '2026-05-10T03:00:00Z');
    expect(isoOf(deliveries)).toEqual(['2026-05-10T00:30:00.000Z', '2026-05-10T01:30:00.000Z', '2026-05-10T02:30:00.000Z']);
  });

  it('skips the hour that does not exist when a zone springs forward by 30 minutes (Australia/Lord_Howe)', () => {
    // 2026-10-04 02:00 (+10:30, 15:30Z) jumps to 02:30 (+11); the next local minute 0 is 03:00 (16:00Z).
    const deliveries = deliveriesBetween('Australia/Lord_Howe', '2026-10-03T13:00:00Z', '2026-10-03T17:00:00Z');
    expect(isoOf(deliveries)).toEqual(['2026-10-03T13:30:00.000Z', '2026-10-03T14:30:00.000Z', '2026-10-03T16:00:00.000Z', '2026-10-03T17:00:00.000Z']);
  });
});
