import { describe, expect, it } from 'vitest';
import { compileFilters } from './compile';
import { EVENT, holds, predicate } from './test-helpers';
import type { Condition, MatchableEvent } from './types';

const c = (name: string, type: Condition['type'], value?: unknown): Condition =>
  value === undefined ? { name, type } : { name, type, value };

describe('operators', () => {
  it.each<[Condition, boolean]>([
    [c('asset', 'eq', 'www.example.com'), true],
    [c('asset', 'eq', 'example.com'), false],
    [c('severity', 'eq', 'HIGH'), true],
    [c('severity', 'eq', 'low'), false],
    [c('tags', 'eq', 'production'), true],
    [c('tags', 'eq', 'prod'), false],
    [c('data.port', 'eq', 3389), true],
    [c('data.port', 'eq', '3389'), false],
    [c('data.open', 'eq', true), true],
    [c('data.open', 'eq', false), false],
    [c('data.cves', 'eq', 'cve-2024-2'), true],
  ])('eq %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  // eq ignores case as String.prototype.toLowerCase does, also where a lowered string changes
  // length (U+0130) or a non-ASCII letter lowers to ASCII (U+212A, the Kelvin sign).
  it.each<[string, string, boolean]>([
    ['WWW.Example.COM', 'www.example.com', true],
    ['www.example.com', 'WWW.EXAMPLE.COM', true],
    ['www.example.con', 'www.example.com', false],
    ['www.example.co', 'www.example.com', false],
    ['\u212Aey', 'key', true],
    ['\u212Aex', 'key', false],
    ['\u0130d', 'id', false],
    ['\u0130d', 'i\u0307d', true],
    ['i\u0307d', '\u0130D', true],
    ['Ünï', 'üNÏ', true],
    ['', '', true],
  ])('eq on %j with %j -> %s', (asset, value, expected) => {
    expect(holds(c('asset', 'eq', value), { ...EVENT, asset })).toBe(expected);
    expect(asset.toLowerCase() === value.toLowerCase()).toBe(expected);
  });

  it.each<[Condition, boolean]>([
    [c('severity', 'in', ['critical', 'High']), true],
    [c('severity', 'in', ['info', 'low']), false],
    [c('asset_type', 'in', ['DOMAIN', 'ip']), true],
    [c('asset_type', 'in', ['ip']), false],
    [c('tags', 'in', ['web', 'x']), true],
    [c('tags', 'in', ['x', 'y']), false],
    [c('data.port', 'in', [22, 3389]), true],
    [c('data.port', 'in', ['3389']), false],
    [c('data.service', 'in', ['rdp', 'ssh']), true],
  ])('in %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  it.each<[Condition, boolean]>([
    [c('asset', 'startswith', 'WWW.'), true],
    [c('asset', 'startswith', 'example'), false],
    [c('tags', 'startswith', 'prod'), true],
    [c('data.service', 'startswith', 'r'), true],
    [c('data.port', 'startswith', '33'), false],
    [c('asset', 'endswith', '.EXAMPLE.com'), true],
    [c('asset', 'endswith', '.example'), false],
    [c('tags', 'endswith', 'EB'), true],
    [c('data.cves', 'endswith', '-2'), true],
    [c('data.cves', 'endswith', '-3'), false],
  ])('startswith/endswith %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  it.each<[Condition, boolean]>([
    [c('asset', 'wildcard', '*.example.com'), true],
    [c('asset', 'wildcard', 'w?w.*'), true],
    [c('asset', 'wildcard', '*.example.org'), false],
    [c('asset', 'wildcard', 'www.example'), false],
    [c('tags', 'wildcard', 'prod*'), true],
    [c('tags', 'wildcard', 'test*'), false],
    [c('data.port', 'wildcard', '*'), false],
  ])('wildcard %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  it.each<[Condition, boolean]>([
    [c('tags', 'contains_any', ['PRODUCTION', 'staging']), true],
    [c('tags', 'contains_any', ['test', 'staging']), false],
    [c('data.cves', 'contains_any', ['CVE-2024-2']), true],
    [c('data.port', 'contains_any', [3389, 22]), true],
    [c('data.port', 'contains_any', ['3389']), false],
    [c('data.service', 'contains_any', ['rdp']), true],
    [c('tags', 'contains_all', ['web', 'production']), true],
    [c('tags', 'contains_all', ['web', 'production', 'test']), false],
    [c('tags', 'contains_all', ['WEB', 'web']), true],
    [c('data.cves', 'contains_all', ['cve-2024-1', 'CVE-2024-2']), true],
    [c('data.port', 'contains_all', [3389]), true],
    [c('data.port', 'contains_all', [3389, 22]), false],
  ])('contains %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  it.each<[Condition, boolean]>([
    [c('asset_type', 'exists'), true],
    [c('asset_type', 'exists', true), true],
    [c('asset_type', 'exists', false), false],
    [c('data.port', 'exists'), true],
    [c('data.missing', 'exists'), false],
    [c('data.missing', 'exists', false), true],
    [c('data.constructor', 'exists'), false],
    [c('data.__proto__', 'exists'), false],
    [c('data.toString', 'eq', 'x'), false],
  ])('exists %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));

  it.each<[Condition, boolean]>([
    [c('data.port', 'gte', 3389), true],
    [c('data.port', 'gte', 3390), false],
    [c('data.port', 'lte', 3389), true],
    [c('data.port', 'lte', 1024), false],
    [c('data.port', 'gte', '1000'), false],
    [c('data.seen', 'gte', '2024-01-01T00:00:00Z'), true],
    [c('data.seen', 'gte', '2024-06-01T00:00:00Z'), false],
    [c('data.seen', 'lte', '2024-06-01T00:00:00Z'), true],
    [c('data.seen', 'lte', 2024), false],
  ])('gte/lte on data %j -> %s', (condition, expected) => expect(holds(condition, EVENT)).toBe(expected));
});

describe('severity ordering', () => {
  const levels = ['info', 'low', 'medium', 'high', 'critical'] as const;

  it.each(levels.flatMap((event) => levels.map((bound) => [event, bound] as const)))(
    'event %s against bound %s',
    (severity, bound) => {
      const event = { ...EVENT, severity };
      const rank = (s: string) => levels.indexOf(s as (typeof levels)[number]);
      expect(holds(c('severity', 'gte', bound), event)).toBe(rank(severity) >= rank(bound));
      expect(holds(c('severity', 'lte', bound), event)).toBe(rank(severity) <= rank(bound));
    },
  );

  it('compares case-insensitively and rejects unknown severities on the event', () => {
    expect(holds(c('severity', 'gte', 'High'), { ...EVENT, severity: 'CRITICAL' })).toBe(true);
    expect(holds(c('severity', 'gte', 'info'), { ...EVENT, severity: 'urgent' })).toBe(false);
    expect(holds(c('severity', 'lte', 'critical'), { ...EVENT, severity: 'urgent' })).toBe(false);
  });

  it('orders by rank, not alphabetically', () => {
    // Alphabetically "critical" < "high" < "info" < "low" < "medium".
    expect(holds(c('severity', 'gte', 'medium'), { ...EVENT, severity: 'critical' })).toBe(true);
    expect(holds(c('severity', 'gte', 'medium'), { ...EVENT, severity: 'info' })).toBe(false);
  });
});

describe('missing fields', () => {
  const bare: MatchableEvent = { asset: 'x.example.com' };
  const nulls: MatchableEvent = { asset: 'x.example.com', asset_type: null, severity: null, tags: null, data: null };

  it.each([bare, nulls])('every operator is false except exists:false (%j)', (event) => {
    const conditions: Condition[] = [
      c('severity', 'eq', 'high'),
      c('severity', 'in', ['high']),
      c('severity', 'gte', 'info'),
      c('severity', 'lte', 'critical'),
      c('asset_type', 'startswith', 'd'),
      c('asset_type', 'endswith', 'n'),
      c('asset_type', 'wildcard', '*'),
      c('tags', 'contains_any', ['a']),
      c('tags', 'contains_all', ['a']),
      c('data.port', 'eq', 1),
      c('data.port', 'gte', 1),
      c('tags', 'exists'),
      c('data.port', 'exists', true),
    ];
    for (const condition of conditions) expect(holds(condition, event), JSON.stringify(condition)).toBe(false);
    expect(holds(c('tags', 'exists', false), event)).toBe(true);
    expect(holds(c('data.port', 'exists', false), event)).toBe(true);
  });

  it('a must_not on a missing field is satisfied', () => {
    expect(predicate({ must_not: [c('tags', 'contains_any', ['test'])] })(bare)).toBe(true);
  });

  it('a null inside data counts as missing, an empty array does not', () => {
    const event = { ...EVENT, data: { a: null, b: [] } };
    expect(holds(c('data.a', 'exists'), event)).toBe(false);
    expect(holds(c('data.b', 'exists'), event)).toBe(true);
    expect(holds(c('data.b', 'contains_any', ['x']), event)).toBe(false);
  });
});

describe('clauses', () => {
  const high = c('severity', 'gte', 'high');
  const low = c('severity', 'lte', 'low');
  const prod = c('tags', 'contains_any', ['production']);
  const test = c('tags', 'contains_any', ['test']);
  const event = EVENT;

  it('empty or absent filters match everything', () => {
    expect(compileFilters(null)(event)).toBe(true);
    expect(compileFilters(undefined)(event)).toBe(true);
    expect(compileFilters({ must: [], should: [], must_not: [] })(event)).toBe(true);
    expect(predicate({})(event)).toBe(true);
  });

  it('must: all hold', () => {
    expect(predicate({ must: [high, prod] })(event)).toBe(true);
    expect(predicate({ must: [high, low] })(event)).toBe(false);
  });

  it('should: at least one holds when not empty; empty imposes nothing', () => {
    expect(predicate({ should: [low, prod] })(event)).toBe(true);
    expect(predicate({ should: [low, test] })(event)).toBe(false);
    expect(predicate({ must: [high], should: [] })(event)).toBe(true);
  });

  it('must_not: none holds', () => {
    expect(predicate({ must_not: [low, test] })(event)).toBe(true);
    expect(predicate({ must_not: [low, prod] })(event)).toBe(false);
  });

  it('combines all three', () => {
    const rule = predicate({
      must: [c('severity', 'in', ['high', 'critical'])],
      should: [c('asset', 'wildcard', '*.example.com'), c('tags', 'contains_any', ['production'])],
      must_not: [c('tags', 'contains_any', ['test'])],
    });
    expect(rule(event)).toBe(true);
    expect(rule({ ...event, severity: 'medium' })).toBe(false);
    expect(rule({ ...event, asset: 'api.example.com', tags: [] })).toBe(true);
    expect(rule({ ...event, asset: 'example.org', tags: ['web'] })).toBe(false);
    expect(rule({ ...event, tags: ['production', 'TEST'] })).toBe(false);
    expect(rule({ asset: 'a.example.com', severity: 'critical' })).toBe(true);
  });

  it('is reusable across many events (no state kept between calls)', () => {
    const rule = predicate({ must: [c('asset', 'wildcard', '*.example.com')] });
    for (let i = 0; i < 3; i++) {
      expect(rule({ asset: 'a.example.com' })).toBe(true);
      expect(rule({ asset: 'a.example.org' })).toBe(false);
    }
  });
});
