import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRuleListQuery } from '@notify/core';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';

const RULES = '/v1/platform/notification-rules';

describe('list pages are cached per organization and never served stale', () => {
  let a: TestApp;
  let b: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    a = await startTestApp();
    // A second instance on the same database and Redis (and queue prefix, the cache's namespace).
    b = await startTestApp({ QUEUE_PREFIX: a.deps.config.queuePrefix }, { db: a.db });
    org = await a.createOrg({ memberCount: 2 });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const names = async (t: TestApp, query = '') => ((await t.api(org.key, 'GET', `${RULES}${query}`)).json().results as Array<{ name: string }>).map((rule) => rule.name).sort();
  const create = (t: TestApp, name: string) =>
    t.api(org.key, 'POST', RULES, { name, scope: 'asset_dns_changed', members: [org.members[0]!.team_member_uuid, org.members[1]!.team_member_uuid] });

  it('shows a write on the next read, on the same and on another instance', async () => {
    expect(await names(a)).toEqual([]);
    expect(await names(b)).toEqual([]);
    const first = (await create(a, 'first')).json();
    expect(await names(a)).toEqual(['first']);
    expect(await names(b)).toEqual(['first']);

    await b.api(org.key, 'PUT', `${RULES}/${first.id}`, { name: 'renamed', members: [org.members[0]!.team_member_uuid], enabled: true });
    expect(await names(a)).toEqual(['renamed']);
    await b.api(org.key, 'DELETE', `${RULES}/${first.id}`);
    expect(await names(a)).toEqual([]);
  });

  it('shows a removed member gone from the rules at once', async () => {
    await create(a, 'with two');
    const before = (await a.api(org.key, 'GET', RULES)).json().results[0];
    expect(before.members).toHaveLength(2);
    const removed = await b.admin('DELETE', `/admin/v1/organizations/${org.id}/members/${org.members[1]!.team_member_uuid}`);
    expect(removed.statusCode).toBe(204);
    const after = (await a.api(org.key, 'GET', RULES)).json().results[0];
    expect(after.members).toEqual([{ team_member_uuid: org.members[0]!.team_member_uuid, email: org.members[0]!.email, subscribed: true }]);
  });

  it('keeps organizations apart', async () => {
    const other = await a.createOrg();
    await a.api(other.key, 'POST', RULES, { name: 'theirs', scope: 'asset_dns_changed', members: [other.members[0]!.team_member_uuid] });
    expect(await names(a)).not.toContain('theirs');
    expect((await a.api(other.key, 'GET', RULES)).json().results.map((rule: { name: string }) => rule.name)).toEqual(['theirs']);
  });

  it('answers from the database when Redis cannot tell the version', async () => {
    await names(a, '?ordering=name');
    await a.deps.db.pool.query(`UPDATE notification_rules SET name = 'changed behind the API' WHERE organization_id = $1`, [org.id]);
    a.deps.redis.disconnect();
    try {
      expect(await names(a, '?ordering=name')).toEqual(['changed behind the API']);
    } finally {
      a.deps.redis.connect().catch(() => {});
    }
  });
});

describe('the list cache is bounded by bytes, in total and per organization', () => {
  const MAX_BYTES = 4 * 1024 * 1024;
  let t: TestApp;
  let big: TestOrg;
  let small: TestOrg;
  let gc: () => void;

  beforeAll(async () => {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
    t = await startTestApp({ RULE_LIST_CACHE_BYTES: String(MAX_BYTES) });
    // Pages of about 400 KB: 100 rules with long names, each notifying 40 members.
    big = await t.createOrg({ memberCount: 40 });
    const members = big.members.map((member) => member.team_member_uuid);
    for (let i = 0; i < 100; i++) {
      const created = await t.api(big.key, 'POST', RULES, { name: `${'n'.repeat(200)} ${i}`, scope: 'asset_dns_changed', members });
      expect(created.statusCode).toBe(201);
    }
    small = await t.createOrg();
    await t.api(small.key, 'POST', RULES, { name: 'small', scope: 'asset_dns_changed', members: [small.members[0]!.team_member_uuid] });
  });
  afterAll(async () => {
    await t.close();
  });

  const heapUsed = () => {
    gc();
    return process.memoryUsage().heapUsed;
  };

  it('keeps the byte count under the bound however many distinct queries a client sends, and the heap with it', async () => {
    const cache = t.deps.ruleListCache;
    expect((await t.api(small.key, 'GET', `${RULES}?ordering=name`)).statusCode).toBe(200);
    const smallBytes = cache.bytesOf(small.id);
    expect(smallBytes).toBeGreaterThan(0);

    const before = heapUsed();
    let pageBytes = 0;
    for (let i = 0; i < 100; i++) {
      // Each second of added_date__lte is a new query, so a new page.
      const lte = new Date(Date.UTC(2090, 0, 1) + i * 1000).toISOString();
      const response = await t.api(big.key, 'GET', `${RULES}?page_size=100&added_date__lte=${lte}`);
      expect(response.statusCode).toBe(200);
      pageBytes = Math.max(pageBytes, response.body.length);
      expect(cache.bytes).toBeLessThanOrEqual(MAX_BYTES);
      expect(cache.bytesOf(big.id)).toBeLessThanOrEqual(MAX_BYTES / 4);
    }
    const growth = heapUsed() - before;
    expect(pageBytes).toBeGreaterThan(300_000);
    // 100 pages of 300+ KB are 30+ MB; the cache may hold a quarter of 4 MiB of them.
    expect(growth).toBeLessThan(16 * 1024 * 1024);
    // One organization's flood did not push the other's page out.
    expect(cache.bytesOf(small.id)).toBe(smallBytes);
  }, 60_000);

  it('still serves repeated queries from the cache, evicting the least recently used page first', async () => {
    const cache = t.deps.ruleListCache;
    const key = (ordering: string) => JSON.stringify(parseRuleListQuery({ page_size: '100', ordering }));
    const read = (ordering: string) => t.api(big.key, 'GET', `${RULES}?page_size=100&ordering=${ordering}`);
    // The organization's share (1 MiB) holds two of these pages.
    const first = await read('name');
    await read('-name');
    const version = (await cache.version(big.id))!;
    expect(cache.get(big.id, key('name'), version)).toBe(first.body);
    // 'name' was just used, so the next page pushes '-name' out, not it.
    await read('scope');
    expect(cache.get(big.id, key('-name'), version)).toBeUndefined();
    expect(cache.get(big.id, key('name'), version)).toBe(first.body);
    expect(cache.get(big.id, key('scope'), version)).toBeDefined();
    expect((await read('name')).body).toBe(first.body);
  });
});
