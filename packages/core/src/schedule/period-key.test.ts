import { describe, expect, it } from 'vitest';
import { periodContaining, periodKeys } from './index';
import { at, schedule } from './test-support';

describe('period keys', () => {
  it('of a digest are the basic ISO UTC instant of dueAt', () => {
    expect(periodContaining(schedule('daily', 'America/New_York', 9), at('2026-11-22T12:00:00Z')).key).toBe('20261122T140000Z');
    expect(periodContaining(schedule('hourly', 'Asia/Kathmandu'), at('2026-11-22T12:00:00Z')).key).toBe('20261122T121500Z');
    expect(periodKeys.digest(Date.parse('2026-12-31T23:00:00Z'))).toBe('20261231T230000Z');
  });

  it('of instant rules, bursts and flushes carry their instant in epoch milliseconds, each kind its own letter', () => {
    const when = at('2026-11-22T12:00:00.123Z');
    expect(periodKeys.instant(when)).toBe('i1795348800123');
    expect(periodKeys.burst(when)).toBe('b1795348800123');
    expect(periodKeys.flush(when)).toBe('f1795348800123');
  });

  it('of a late round extend the delivered key with a random suffix, different every time', () => {
    const first = periodKeys.lateRound('20261122T140000Z');
    expect(first).toMatch(/^20261122T140000Z~[0-9a-f]{8}$/);
    expect(periodKeys.lateRound('20261122T140000Z')).not.toBe(first);
  });

  it('hold no job id separator', () => {
    const when = at('2026-11-22T12:00:00Z');
    for (const key of [periodKeys.digest(when.getTime()), periodKeys.instant(when), periodKeys.burst(when), periodKeys.flush(when), periodKeys.lateRound('x')]) {
      expect(key).not.toMatch(/[.:]/);
    }
  });
});
