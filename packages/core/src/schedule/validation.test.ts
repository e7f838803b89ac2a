import { describe, expect, it } from 'vitest';
import { periodContaining } from './index';
import { at, nextDeliveryAt, schedule } from './test-support';

const when = at('2026-05-10T12:00:00Z');

describe('invalid schedules', () => {
  it.each(['', 'Mars/Base', '+02:00'])('throw for the time zone %j', (zone) => {
    expect(() => nextDeliveryAt(schedule('daily', zone, 9), when)).toThrow(/time zone/);
    expect(() => periodContaining(schedule('hourly', zone), when)).toThrow(/time zone/);
  });

  it.each([-1, 24, 2.5])('throw for the delivery hour %s', (hour) => {
    expect(() => nextDeliveryAt(schedule('daily', 'UTC', hour), when)).toThrow(/delivery hour/);
    expect(() => periodContaining(schedule('monthly', 'UTC', hour), when)).toThrow(/delivery hour/);
  });

  it.each([-1, 7, 0.5])('throw for the delivery day of week %s', (day) => {
    expect(() => nextDeliveryAt(schedule('weekly', 'UTC', 9, day), when)).toThrow(/day of week/);
  });

  it('throw for an instant schedule, which has no periods', () => {
    const instant = schedule('instant');
    expect(() => nextDeliveryAt(instant, when)).toThrow(/instant/);
    expect(() => periodContaining(instant, when)).toThrow(/instant/);
  });

  it('throw for an invalid date', () => {
    expect(() => periodContaining(schedule('daily', 'UTC', 9), new Date(Number.NaN))).toThrow(/Invalid at/);
    expect(() => periodContaining(schedule('daily', 'UTC', 9), new Date('nope'))).toThrow(/Invalid at/);
  });
});
