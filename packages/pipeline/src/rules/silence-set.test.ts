import type { Condition, MatchableEvent } from '@notify/core';
import type { UnexpiredSilence } from '@notify/db';
import { describe, expect, it } from 'vitest';
import { SilenceSet } from './silence-set';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const HOUR = 3_600_000;

function silence(id: string, must: Condition[], options: { ruleIds?: string[]; startsAt?: number; endsAt?: number } = {}): UnexpiredSilence {
  return {
    id,
    organization_id: 'org',
    filters: { must, should: [], must_not: [] },
    rule_ids: options.ruleIds ?? null,
    starts_at: new Date(options.startsAt ?? NOW - HOUR),
    ends_at: new Date(options.endsAt ?? NOW + HOUR),
  };
}

const event = (asset: string, severity = 'high'): MatchableEvent => ({ scope: 'open_ports', asset, asset_type: 'domain', severity, tags: [], data: {} });
const ids = (set: SilenceSet, e: MatchableEvent, now = NOW) => set.covering(e, now).map((s) => s.id);

describe('SilenceSet', () => {
  it('finds the silences of an asset whatever its case, and the silences that name no asset, in the order they were loaded', () => {
    const set = new SilenceSet([
      silence('critical', [{ name: 'severity', type: 'eq', value: 'critical' }]),
      silence('db', [{ name: 'asset', type: 'eq', value: 'DB.example.com' }]),
      silence('all-high', [{ name: 'severity', type: 'eq', value: 'high' }]),
      silence('db-high', [{ name: 'severity', type: 'gte', value: 'high' }, { name: 'asset', type: 'eq', value: 'db.example.com' }]),
      silence('web', [{ name: 'asset', type: 'eq', value: 'www.example.com' }]),
    ]);
    expect(ids(set, event('db.EXAMPLE.com'))).toEqual(['db', 'all-high', 'db-high']);
    expect(ids(set, event('db.example.com', 'low'))).toEqual(['db']);
    expect(ids(set, event('www.example.com', 'critical'))).toEqual(['critical', 'web']);
    expect(ids(set, event('mail.example.com', 'low'))).toEqual([]);
  });

  it('holds an asset silence to its other conditions and to its time', () => {
    const set = new SilenceSet([
      silence('later', [{ name: 'asset', type: 'eq', value: 'db.example.com' }], { startsAt: NOW + HOUR, endsAt: NOW + 2 * HOUR }),
      silence('ssh', [{ name: 'asset', type: 'eq', value: 'db.example.com' }, { name: 'data.port', type: 'eq', value: 22 }]),
    ]);
    expect(ids(set, event('db.example.com'))).toEqual([]);
    expect(ids(set, { ...event('db.example.com'), data: { port: 22 } })).toEqual(['ssh']);
    expect(ids(set, event('db.example.com'), NOW + HOUR)).toEqual(['later']);
    expect(ids(set, event('db.example.com'), NOW + 2 * HOUR)).toEqual([]);
  });

  it('keeps the rules a silence names', () => {
    const [only] = new SilenceSet([silence('one-rule', [{ name: 'asset', type: 'eq', value: 'db.example.com' }], { ruleIds: ['r1'] })]).covering(event('db.example.com'), NOW);
    expect(only?.ruleIds).toEqual(new Set(['r1']));
  });
});
