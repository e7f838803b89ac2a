import { describe, expect, it } from 'vitest';
import { duePeriods } from './index';
import { at, isoOf, schedule } from './test-support';

describe('duePeriods', () => {
  const daily = schedule('daily', 'UTC', 9);

  it('returns the 3 periods missed during a 3-day outage, oldest first', () => {
    const dues = duePeriods(daily, at('2026-05-10T09:00:00Z'), at('2026-05-13T10:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual([
      '2026-05-11T09:00:00.000Z',
      '2026-05-12T09:00:00.000Z',
      '2026-05-13T09:00:00.000Z',
    ]);
    expect(dues[0]!.start).toEqual(at('2026-05-10T09:00:00Z'));
    expect(dues[1]!.start).toEqual(dues[0]!.end);
  });

  it('excludes a period due exactly at `from` and includes one due exactly at `now`', () => {
    const dues = duePeriods(daily, at('2026-05-10T09:00:00Z'), at('2026-05-11T09:00:00Z'));
    expect(isoOf(dues.map((period) => period.dueAt))).toEqual(['2026-05-11T09:00:00.000Z']);
  });

  it('caps the result at `limit`, keeping the oldest so the last dueAt works as a cursor', () => {
    const from = at('2026-05-10T09:00:00Z');
    const now = at('2026-05-13T10:00:00Z');
    const first = duePeriods(daily, from, now, 2);
    expect(isoOf(first.map((period) => period.dueAt))).toEqual(['2026-05-11T09:00:00.000Z', '2026-05-12T09:00:00.000Z']);
    const rest = duePeriods(daily, first[1]!.dueAt, now, 2);
    expect(isoOf(rest.map((period) => period.dueAt))).toEqual(['2026-05-13T09:00:00.000Z']);
    expect(duePeriods(daily, from, now, 0)).toEqual([]);
  });

  it('is empty when nothing fell due', () => {
    expect(duePeriods(daily, at('2026-05-10T09:00:00Z'), at('2026-05-11T08:59:59Z'))).toEqual([]);
    expect(duePeriods(daily, at('2026-05-12T00:00:00Z'), at('2026-05-10T00:00:00Z'))).toEqual([]);
  });

  it('defaults the cap to 100', () => {
    expect(duePeriods(schedule('hourly'), at('2026-05-01T00:00:00Z'), at('2026-05-31T00:00:00Z'))).toHaveLength(100);
  });

  it.each([-1, 1.5, Number.NaN])('rejects limit %s', (limit) => {
    expect(() => duePeriods(daily, at('2026-05-10T00:00:00Z'), at('2026-05-13T00:00:00Z'), limit)).toThrow(/limit/);
  });
});
