import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(after.members).toEqual([{ team_member_uuid: org.members[0]!.team_member_uuid, email: org.members[0]!.email }]);
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
