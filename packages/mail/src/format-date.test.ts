import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { formatDateTime } from './format-date';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The wall clock as luxon gives it (what formatDateTime printed before it cached offsets). */
function luxonWallClock(time: number, zone: string): string {
  const local = DateTime.fromMillis(time, { zone });
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${local.day} ${MONTHS[local.month - 1]} ${local.year}, ${pad(local.hour)}:${pad(local.minute)}`;
}

const wallClock = (time: number, zone: string) => formatDateTime(new Date(time), zone).replace(/ [^ ]+$/, '');

describe('formatDateTime', () => {
  it('writes the wall clock and the zone abbreviation', () => {
    expect(formatDateTime(new Date('2026-11-20T10:15:00Z'), 'Europe/Paris')).toBe('20 Nov 2026, 11:15 CET');
    expect(formatDateTime(new Date('2026-07-20T10:15:00Z'), 'Europe/Paris')).toBe('20 Jul 2026, 12:15 CEST');
    expect(formatDateTime(new Date('2026-11-20T10:15:00Z'), 'UTC')).toBe('20 Nov 2026, 10:15 UTC');
    expect(formatDateTime(new Date(Number.NaN), 'UTC')).toBe('unknown time');
  });

  it('agrees with luxon minute by minute across transitions, in zones with odd offsets and shifts', () => {
    const cases: Array<[string, string]> = [
      ['Europe/Paris', '2026-03-29T00:00:00Z'], // spring forward at 01:00 UTC
      ['Europe/Paris', '2026-10-25T00:00:00Z'], // fall back at 01:00 UTC
      ['America/St_Johns', '2026-11-01T02:00:00Z'], // -03:30 / -02:30
      ['Australia/Lord_Howe', '2026-04-04T14:00:00Z'], // a 30-minute shift
      ['Asia/Kathmandu', '2026-01-01T00:00:00Z'], // +05:45
      ['Europe/Amsterdam', '1937-06-30T22:00:00Z'], // +00:19:32 to +00:20, an odd-second offset
    ];
    for (const [zone, from] of cases) {
      const start = Date.parse(from);
      // Both directions, so the cache is filled from either side of a transition.
      for (const step of [60_000, -60_000]) {
        for (let k = 0; k <= 4 * 60; k += 1) {
          const time = step > 0 ? start + k * step : start + 4 * 3_600_000 + k * step;
          expect(wallClock(time, zone), `${zone} ${new Date(time).toISOString()}`).toBe(luxonWallClock(time, zone));
        }
      }
    }
  });
});
