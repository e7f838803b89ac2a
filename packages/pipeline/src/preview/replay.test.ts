import { describe, expect, it } from 'vitest';
import { replayMatches, type ReplayedMatches } from './replay';

const T0 = Date.UTC(2026, 10, 2, 8, 0, 0); // Monday 2 November 2026, 08:00 UTC
const H = 3_600_000;
const at = (offsetMs: number, finding = String(offsetMs)) => ({ at: T0 + offsetMs, finding });
/** The matches by column, as a preview hands them over. */
const columns = (matches: ReadonlyArray<ReturnType<typeof at>>): ReplayedMatches => {
  const numbers = new Map<string, number>();
  const numberOf = (finding: string) => numbers.get(finding) ?? numbers.set(finding, numbers.size).size - 1;
  return { at: matches.map((m) => m.at), findings: matches.map((m) => numberOf(m.finding)) };
};
const utc = (frequency: 'instant' | 'hourly' | 'daily' | 'weekly', deliveryHour: number | null = null, deliveryDayOfWeek: number | null = null) =>
  ({ schedule: { frequency, deliveryHour, deliveryDayOfWeek, timeZone: 'UTC' }, renotifyAfterHours: null });

describe('replayMatches', () => {
  it('an instant rule: the first match after a quiet spell at once, the rest of its window as one burst', () => {
    const matches = [at(0), at(1000), at(2000), at(60_000), at(61_000)];
    expect(replayMatches(columns(matches), utc('instant'), 5000)).toEqual({ emails: 4, repeats: 0, last: { indexes: [4], period: null } });
    // A burst's e-mail carries every match of its window after the first.
    expect(replayMatches(columns(matches.slice(0, 3)), utc('instant'), 5000).last).toEqual({ indexes: [1, 2], period: null });
    expect(replayMatches(columns([]), utc('instant'), 5000)).toEqual({ emails: 0, repeats: 0, last: null });
  });

  it('a daily rule at 09:00: one e-mail per period with a match, the last one with its period', () => {
    const matches = [at(0), at(30 * 60_000), at(H), at(2 * H), at(25 * H)];
    const replay = replayMatches(columns(matches), utc('daily', 9), 5000);
    expect(replay.emails).toBe(3);
    // 08:00 and 08:30 before 09:00; 09:00 and 10:00 in the next day's period; 09:00 the day after.
    expect(replay.last!.indexes).toEqual([4]);
    expect(replay.last!.period!.end.toISOString()).toBe('2026-11-04T09:00:00.000Z');
  });

  it('in the organization\'s time zone: a weekly rule on Monday 09:00 in Tokyo', () => {
    const schedule = { frequency: 'weekly' as const, deliveryHour: 9, deliveryDayOfWeek: 0, timeZone: 'Asia/Tokyo' };
    // 08:00 UTC Monday is 17:00 in Tokyo, after that Monday's 09:00: the period ends next Monday.
    const replay = replayMatches(columns([at(0), at(6 * 24 * H)]), { schedule, renotifyAfterHours: null }, 5000);
    expect(replay.emails).toBe(1);
    expect(replay.last!.period!.end.toISOString()).toBe('2026-11-09T00:00:00.000Z');
  });

  it('renotify_after_hours: a finding seen again within the window is a repeat, news again after it', () => {
    const matches = [at(0, 'a'), at(H, 'a'), at(2 * H, 'b'), at(25 * H, 'a')];
    const replay = replayMatches(columns(matches), { ...utc('instant'), renotifyAfterHours: 24 }, 5000);
    expect(replay).toMatchObject({ emails: 3, repeats: 1 });
  });

  it('keeps the newest `keep` matches of the last e-mail', () => {
    // 1,000 matches a minute apart from 08:00: 60 before 09:00, 940 in the next day's period.
    const matches = Array.from({ length: 1000 }, (_, i) => at(i * 60_000));
    const replay = replayMatches(columns(matches), utc('daily', 9), 5000, 7);
    expect(replay.emails).toBe(2);
    expect(replay.last!.indexes).toEqual([993, 994, 995, 996, 997, 998, 999]);
    expect(replayMatches(columns(matches), utc('daily', 9), 5000).last!.indexes).toHaveLength(940);
  });

  it('without findings, a renotify window takes every match as news', () => {
    const matches = [at(0, 'a'), at(H, 'a')];
    expect(replayMatches({ at: columns(matches).at, findings: null }, { ...utc('instant'), renotifyAfterHours: 24 }, 5000)).toMatchObject({ emails: 2, repeats: 0 });
  });

  it('renotify_after_hours over thousands of findings, each remembered by its number', () => {
    // 3,000 findings a second apart, then the 2,500th again an hour later (a repeat) and the 10th a day later (news).
    const matches = [...Array.from({ length: 3000 }, (_, i) => at(i * 1000, `f${i}`)), at(3000 * 1000 + H, 'f2500'), at(25 * H, 'f10')];
    expect(replayMatches(columns(matches), { ...utc('daily', 9), renotifyAfterHours: 24 }, 5000)).toMatchObject({ repeats: 1 });
  });
});
