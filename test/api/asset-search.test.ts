import { randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSET_FIELDS, compileFilters, validateFilters, type Condition, type MatchableEvent } from '@notify/core';
import { assetSearchStatement, migrate, MIGRATIONS_DIR, readMigrations } from '@notify/db';
import { DATABASE_URL } from '../support/database';
import { INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';

const SEARCH = '/v1/easm/assets/search';
const DOCS = 'https://docs.example.test/notification-rules';
const EASM_PLAN = { groups: ['platform', 'easm'] };
const run = randomBytes(3).toString('hex');
let sequence = 0;

interface AssetItem {
  asset: string;
  asset_type: string | null;
  tags: string[];
  scopes: string[];
  first_seen: string;
  last_seen: string;
}

interface Page {
  page: number;
  page_size: number;
  result_count: number;
  results: AssetItem[];
}

type Wire = Record<string, unknown>;

/** Events of the main organization: [asset, asset_type, tags, scope, occurred_at]. */
const FIXTURE: Array<[string, string | null, string[], string, string]> = [
  ['www.example.com', 'subdomain', ['production', 'web'], 'new_open_port_detected', '2026-01-10T08:00:00Z'],
  ['Mail.Example.com', 'subdomain', ['production', 'mail'], 'asset_ssl_changed', '2026-01-12T09:30:00Z'],
  ['api.example.com', 'subdomain', ['staging'], 'asset_ssl_changed', '2026-02-01T00:00:00Z'],
  ['example.com', 'domain', ['Production'], 'new_asset_discovered', '2026-01-05T12:00:00Z'],
  ['example.com', 'domain', ['dns'], 'asset_dns_changed', '2026-03-01T06:00:00Z'],
  ['192.0.2.10', 'ip', [], 'new_open_port_detected', '2026-02-15T10:00:00Z'],
  ['example.org', 'domain', ['test'], 'new_issue_detected', '2026-01-20T00:00:00Z'],
  ['cdn.example.net', null, [], 'new_asset_added', '2026-02-20T00:00:00Z'],
  // LIKE's own metacharacters, and a decoy that an unescaped pattern would match.
  ['a_b%c.example.com', 'subdomain', ['odd'], 'new_issue_detected', '2026-02-10T00:00:00Z'],
  ['axbyc.example.com', 'subdomain', ['odd'], 'new_issue_detected', '2026-02-11T00:00:00Z'],
];
const ALL = [...new Set(FIXTURE.map(([asset]) => asset))];

describe('POST /v1/easm/assets/search', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;

  const ingest = async (events: Wire[]) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/ingest/events',
      headers: { authorization: `Bearer ${INGEST_TOKEN}` },
      payload: { events } as never,
    });
    expect(response.statusCode, response.body).toBe(202);
    return response.json() as { accepted: number; duplicates: number };
  };
  const event = (organizationId: string, asset: string, fields: Wire = {}): Wire => ({
    id: `evt-${run}-${++sequence}`,
    organization_id: organizationId,
    scope: 'new_open_port_detected',
    occurred_at: '2026-01-01T00:00:00Z',
    asset,
    title: `finding on ${asset}`,
    ...fields,
  });
  const search = async (body: unknown = {}, query = '', key = org.key): Promise<Page> => {
    const response = await t.api(key, 'POST', `${SEARCH}${query ? `?${query}` : ''}`, body);
    expect(response.statusCode, `${JSON.stringify(body)} ${query}: ${response.body}`).toBe(200);
    return response.json();
  };
  const assetsOf = async (body: unknown, query = '') => {
    const page = await search(body, query);
    expect(page.result_count).toBe(page.results.length);
    return page.results.map((item) => item.asset);
  };
  const matching = async (...conditions: Condition[]) => (await assetsOf({ filters: { must: conditions } })).sort();
  const c = (name: string, type: Condition['type'], value?: unknown): Condition => (value === undefined ? { name, type } : { name, type, value });
  const invalid = (parameters: unknown) => ({ code: 10400, details: null, parameters, solution: DOCS });

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ plan: EASM_PLAN });
    other = await t.createOrg({ plan: EASM_PLAN });
    await ingest(
      FIXTURE.map(([asset, assetType, tags, scope, occurredAt]) =>
        event(org.id, asset, { asset_type: assetType, tags, scope, occurred_at: occurredAt }),
      ),
    );
    // Another organization with an asset of the same name: never visible to the first.
    await ingest([event(other.id, 'www.example.com', { tags: ['secret'], asset_type: 'secret', occurred_at: '2026-06-01T00:00:00Z' })]);
  });
  afterAll(async () => t.close());

  describe('the inventory', () => {
    it('records each asset once per organization with merged tags and scopes and first/last seen', async () => {
      const page = await search();
      expect(page).toMatchObject({ page: 1, page_size: 100, result_count: ALL.length });
      const example = page.results.find((item) => item.asset === 'example.com');
      expect(example).toEqual({
        asset: 'example.com',
        asset_type: 'domain',
        tags: ['Production', 'dns'].sort(),
        scopes: ['asset_dns_changed', 'new_asset_discovered'].sort(),
        first_seen: '2026-01-05T12:00:00.000Z',
        last_seen: '2026-03-01T06:00:00.000Z',
      });
      expect(page.results.find((item) => item.asset === 'cdn.example.net')).toMatchObject({ asset_type: null, tags: [], scopes: ['new_asset_added'] });
    });

    it('widens first and last seen, keeps the asset_type of the latest event and ignores repeated events', async () => {
      const mine = await t.createOrg({ plan: EASM_PLAN });
      const first = event(mine.id, 'host.example.com', { asset_type: 'subdomain', tags: ['a'], occurred_at: '2026-05-01T00:00:00Z' });
      expect(await ingest([first])).toEqual({ accepted: 1, duplicates: 0 });
      // An older event: first_seen moves back, its asset_type does not replace the newer one.
      await ingest([event(mine.id, 'host.example.com', { asset_type: 'host', tags: ['b'], scope: 'asset_ssl_changed', occurred_at: '2026-04-01T00:00:00Z' })]);
      // A newer event without asset_type keeps the known one; a newer one with it replaces it.
      await ingest([event(mine.id, 'host.example.com', { occurred_at: '2026-06-01T00:00:00Z' })]);
      // The same event sent again changes nothing.
      expect(await ingest([{ ...first, tags: ['sent-again'], occurred_at: '2030-01-01T00:00:00Z' }])).toEqual({ accepted: 0, duplicates: 1 });
      const [item] = (await search({}, '', mine.key)).results;
      expect(item).toEqual({
        asset: 'host.example.com',
        asset_type: 'subdomain',
        tags: ['a', 'b'],
        scopes: ['asset_ssl_changed', 'new_open_port_detected'].sort(),
        first_seen: '2026-04-01T00:00:00.000Z',
        last_seen: '2026-06-01T00:00:00.000Z',
      });
      await ingest([event(mine.id, 'host.example.com', { asset_type: 'server', occurred_at: '2026-07-01T00:00:00Z' })]);
      expect((await search({}, '', mine.key)).results[0]).toMatchObject({ asset_type: 'server', last_seen: '2026-07-01T00:00:00.000Z' });
    });

    it('merges several events of one asset within one batch', async () => {
      const mine = await t.createOrg({ plan: EASM_PLAN });
      await ingest([
        event(mine.id, 'batch.example.com', { asset_type: 'old', tags: ['x'], occurred_at: '2026-01-01T00:00:00Z' }),
        event(mine.id, 'batch.example.com', { asset_type: 'new', tags: ['y', 'x'], scope: 'asset_dns_changed', occurred_at: '2026-01-03T00:00:00Z' }),
        event(mine.id, 'batch.example.com', { tags: ['z'], occurred_at: '2026-01-02T00:00:00Z' }),
      ]);
      expect((await search({}, '', mine.key)).results).toEqual([
        {
          asset: 'batch.example.com',
          asset_type: 'new',
          tags: ['x', 'y', 'z'],
          scopes: ['asset_dns_changed', 'new_open_port_detected'].sort(),
          first_seen: '2026-01-01T00:00:00.000Z',
          last_seen: '2026-01-03T00:00:00.000Z',
        },
      ]);
    });

    it('the migration records the events stored before it', async () => {
      const schema = `assets_backfill_${randomBytes(4).toString('hex')}`;
      const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        const migrations = await readMigrations();
        const inventory = migrations.findIndex((migration) => migration.name.endsWith('_asset_inventory'));
        expect(inventory).toBeGreaterThan(0);
        for (const migration of migrations.slice(0, inventory)) await cp(join(MIGRATIONS_DIR, migration.name), join(dir, migration.name), { recursive: true });
        await migrate({ url: DATABASE_URL, schema, migrationsDir: dir });
        const orgId = randomUUID();
        await client.query(`SET search_path TO "${schema}"`);
        await client.query(`INSERT INTO organizations (id, name, updated_at) VALUES ($1, 'Backfill', now())`, [orgId]);
        await client.query(
          `INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, tags, title) VALUES
             ($1, 'e1', 'new_open_port_detected', '2026-01-01T00:00:00Z', 'old.example.com', 'subdomain', '{Prod}', 't'),
             ($1, 'e2', 'asset_dns_changed', '2026-02-01T00:00:00Z', 'old.example.com', NULL, '{dns,Prod}', 't')`,
          [orgId],
        );
        await migrate({ url: DATABASE_URL, schema });
        const { rows } = await client.query(
          'SELECT asset, asset_type, tags, scopes::text[] AS scopes, first_seen, last_seen, asset_lower, asset_lower_reversed, tags_lower FROM assets',
        );
        expect(rows).toEqual([
          {
            asset: 'old.example.com',
            asset_type: 'subdomain',
            tags: ['Prod', 'dns'],
            scopes: ['asset_dns_changed', 'new_open_port_detected'].sort(),
            first_seen: new Date('2026-01-01T00:00:00Z'),
            last_seen: new Date('2026-02-01T00:00:00Z'),
            asset_lower: 'old.example.com',
            asset_lower_reversed: 'moc.elpmaxe.dlo',
            tags_lower: ['dns', 'prod'],
          },
        ]);
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('filters', () => {
    it('an empty body, empty filters or null filters return every asset, most recently seen first', async () => {
      const expected = [
        'example.com', // 03-01
        'cdn.example.net', // 02-20
        '192.0.2.10', // 02-15
        'axbyc.example.com', // 02-11
        'a_b%c.example.com', // 02-10
        'api.example.com', // 02-01
        'example.org', // 01-20
        'Mail.Example.com', // 01-12
        'www.example.com', // 01-10
      ];
      expect(await assetsOf({})).toEqual(expected);
      expect(await assetsOf(undefined)).toEqual(expected);
      expect(await assetsOf({ filters: {} })).toEqual(expected);
      expect(await assetsOf({ filters: null, sort: null })).toEqual(expected);
      expect(await assetsOf({ filters: { must: [], should: [], must_not: [] }, sort: [] })).toEqual(expected);
    });

    it.each<[Condition, string[]]>([
      [c('asset', 'eq', 'WWW.EXAMPLE.COM'), ['www.example.com']],
      [c('asset', 'eq', 'mail.example.com'), ['Mail.Example.com']],
      [c('asset', 'eq', 'a_b%c.example.com'), ['a_b%c.example.com']],
      [c('asset', 'in', ['example.ORG', '192.0.2.10', 'nope.example']), ['192.0.2.10', 'example.org']],
      [c('asset', 'startswith', 'API.'), ['api.example.com']],
      [c('asset', 'startswith', 'a_'), ['a_b%c.example.com']],
      [c('asset', 'endswith', '.Example.COM'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'www.example.com']],
      [c('asset', 'endswith', 'example.net'), ['cdn.example.net']],
      [c('asset', 'wildcard', '*.example.com'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'www.example.com']],
      [c('asset', 'wildcard', 'w?w.*'), ['www.example.com']],
      [c('asset', 'wildcard', 'EXAMPLE.*'), ['example.com', 'example.org']],
      [c('asset', 'wildcard', '*.example.*'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'cdn.example.net', 'www.example.com']],
      [c('asset', 'wildcard', 'a_b%c.example.com'), ['a_b%c.example.com']],
      [c('asset', 'wildcard', 'a?b?c.*'), ['a_b%c.example.com', 'axbyc.example.com']],
      [c('asset', 'wildcard', '192.0.2.1?'), ['192.0.2.10']],
      [c('asset', 'exists'), ALL],
      [c('asset', 'exists', false), []],
      [c('asset_type', 'eq', 'SUBDOMAIN'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'www.example.com']],
      [c('asset_type', 'in', ['ip', 'Domain']), ['192.0.2.10', 'example.com', 'example.org']],
      [c('asset_type', 'startswith', 'sub'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'www.example.com']],
      [c('asset_type', 'endswith', 'MAIN'), ['Mail.Example.com', 'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'example.com', 'example.org', 'www.example.com']],
      [c('asset_type', 'wildcard', 'i?'), ['192.0.2.10']],
      [c('asset_type', 'exists'), ALL.filter((asset) => asset !== 'cdn.example.net')],
      [c('asset_type', 'exists', false), ['cdn.example.net']],
      [c('tags', 'eq', 'production'), ['Mail.Example.com', 'example.com', 'www.example.com']],
      [c('tags', 'in', ['STAGING', 'test']), ['api.example.com', 'example.org']],
      [c('tags', 'contains_any', ['web', 'dns']), ['example.com', 'www.example.com']],
      [c('tags', 'contains_all', ['PRODUCTION', 'web']), ['www.example.com']],
      [c('tags', 'contains_all', ['production', 'dns']), ['example.com']],
      [c('tags', 'contains_all', ['production', 'nope']), []],
      [c('tags', 'startswith', 'PROD'), ['Mail.Example.com', 'example.com', 'www.example.com']],
      [c('tags', 'endswith', 'ing'), ['api.example.com']],
      [c('tags', 'wildcard', 'm?i*'), ['Mail.Example.com']],
      [c('tags', 'exists'), ALL.filter((asset) => !['192.0.2.10', 'cdn.example.net'].includes(asset))],
      [c('tags', 'exists', false), ['192.0.2.10', 'cdn.example.net']],
      [c('scopes', 'eq', 'NEW_OPEN_PORT_DETECTED'), ['192.0.2.10', 'www.example.com']],
      [c('scopes', 'eq', 'not_a_scope'), []],
      [c('scopes', 'in', ['asset_ssl_changed', 'nope']), ['Mail.Example.com', 'api.example.com']],
      [c('scopes', 'contains_any', ['new_asset_added', 'asset_dns_changed']), ['cdn.example.net', 'example.com']],
      [c('scopes', 'contains_all', ['asset_dns_changed', 'NEW_ASSET_DISCOVERED']), ['example.com']],
      [c('scopes', 'contains_all', ['asset_dns_changed', 'not_a_scope']), []],
      [c('scopes', 'startswith', 'asset_'), ['Mail.Example.com', 'api.example.com', 'example.com']],
      [c('scopes', 'endswith', '_ADDED'), ['cdn.example.net']],
      [c('scopes', 'wildcard', 'new_*_detected'), ['192.0.2.10', 'a_b%c.example.com', 'axbyc.example.com', 'example.org', 'www.example.com']],
      [c('scopes', 'exists'), ALL],
      [c('first_seen', 'gte', '2026-02-15T10:00:00Z'), ['192.0.2.10', 'cdn.example.net']],
      [c('first_seen', 'lte', '2026-01-10T08:00:00.000Z'), ['example.com', 'www.example.com']],
      [c('first_seen', 'lte', '2026-01-10T09:00:00+01:00'), ['example.com', 'www.example.com']],
      [c('first_seen', 'lte', '2026-01-10T07:59:59.999999Z'), ['example.com']],
      [c('first_seen', 'exists'), ALL],
      [c('last_seen', 'gte', '2026-02-20T00:00'), ['cdn.example.net', 'example.com']],
      [c('last_seen', 'lte', '2026-01-12T10:30:00+0100'), ['Mail.Example.com', 'www.example.com']],
    ])('%j', async (condition, expected) => {
      expect(await matching(condition)).toEqual([...expected].sort());
    });

    it('combines must (all), should (at least one) and must_not (none)', async () => {
      const filters = {
        must: [c('asset', 'wildcard', '*.example.*')],
        should: [c('tags', 'contains_any', ['production']), c('asset_type', 'exists', false)],
        must_not: [c('asset', 'startswith', 'mail.')],
      };
      expect((await assetsOf({ filters })).sort()).toEqual(['cdn.example.net', 'www.example.com']);
      // must_not on a field an asset lacks does not exclude it (cdn.example.net has no asset_type).
      expect((await matching()).length).toBe(ALL.length);
      expect((await assetsOf({ filters: { must_not: [c('asset_type', 'eq', 'subdomain'), c('tags', 'contains_any', ['test'])] } })).sort()).toEqual(
        ['192.0.2.10', 'cdn.example.net', 'example.com'].sort(),
      );
      expect(await assetsOf({ filters: { should: [] } })).toHaveLength(ALL.length);
      expect(await assetsOf({ filters: { must: [c('tags', 'eq', 'web')], should: [c('tags', 'eq', 'nope')] } })).toEqual([]);
    });

    it('agrees with the in-memory evaluator of rule strategies on a sample of filters', async () => {
      const everything = (await search()).results;
      // An asset without tags has none, as exists reads it; dates compare as ISO 8601 text in one format.
      const asEvent = (item: AssetItem) => ({ ...item, tags: item.tags.length ? item.tags : null }) as unknown as MatchableEvent;
      const pool: Condition[] = [
        c('asset', 'eq', 'Example.com'), c('asset', 'in', ['www.example.com', 'EXAMPLE.ORG']), c('asset', 'startswith', 'a'),
        c('asset', 'endswith', '.com'), c('asset', 'wildcard', '*a*'), c('asset', 'wildcard', '?x*'), c('asset', 'exists'),
        c('asset_type', 'eq', 'domain'), c('asset_type', 'in', ['IP', 'subdomain']), c('asset_type', 'startswith', 'd'),
        c('asset_type', 'endswith', 'n'), c('asset_type', 'wildcard', '*o*'), c('asset_type', 'exists'), c('asset_type', 'exists', false),
        c('tags', 'eq', 'PRODUCTION'), c('tags', 'in', ['odd', 'mail']), c('tags', 'contains_any', ['staging', 'dns']),
        c('tags', 'contains_all', ['production', 'mail']), c('tags', 'startswith', 'p'), c('tags', 'endswith', 'd'),
        c('tags', 'wildcard', '*e*'), c('tags', 'exists'), c('tags', 'exists', false),
        c('scopes', 'eq', 'asset_ssl_changed'), c('scopes', 'in', ['new_issue_detected', 'x']), c('scopes', 'contains_any', ['new_asset_added']),
        c('scopes', 'contains_all', ['new_asset_discovered', 'asset_dns_changed']), c('scopes', 'startswith', 'NEW_'),
        c('scopes', 'endswith', 'changed'), c('scopes', 'wildcard', '*open*'),
        c('first_seen', 'gte', '2026-01-20T00:00:00.000Z'), c('first_seen', 'lte', '2026-02-10T00:00:00.000Z'),
        c('last_seen', 'gte', '2026-02-01T00:00:00.000Z'), c('last_seen', 'lte', '2026-01-12T09:30:00.000Z'),
      ];
      let seed = 20261122;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const pick = (count: number) => Array.from({ length: count }, () => pool[random(pool.length)]!);
      let nonTrivial = 0;
      for (let i = 0; i < 120; i++) {
        const filters = { must: pick(random(3)), should: pick(random(3)), must_not: pick(random(2)) };
        const validated = validateFilters(filters, { root: 'filters', fields: ASSET_FIELDS });
        expect(validated.ok, JSON.stringify(filters)).toBe(true);
        const predicate = compileFilters(validated.ok ? validated.value : null, ASSET_FIELDS);
        const expected = everything.filter((item) => predicate(asEvent(item))).map((item) => item.asset).sort();
        if (expected.length > 0 && expected.length < ALL.length) nonTrivial++;
        expect((await assetsOf({ filters })).sort(), JSON.stringify(filters)).toEqual(expected);
      }
      expect(nonTrivial).toBeGreaterThan(30);
    });

    it('is answered from indexes: equality, prefixes, suffixes, tags and scopes', async () => {
      // An inventory large enough for the planner to prefer the indexes to reading the organization's rows.
      const bulk = await t.createOrg({ plan: EASM_PLAN });
      await t.db.pool.query(
        `INSERT INTO assets (organization_id, asset, asset_type, tags, scopes, first_seen, last_seen, asset_lower, asset_lower_reversed, tags_lower)
         SELECT $1, h, 'subdomain', ARRAY['t' || (g % 300)], ARRAY[(enum_range(NULL::scope))[1 + g % 21]],
                now() - g * interval '1 minute', now() - g * interval '1 second', h, reverse(h), ARRAY['t' || (g % 300)]
           FROM generate_series(1, 6000) g, LATERAL (SELECT 'h' || g || '.d' || (g % 500) || '.example.com' AS h) n`,
        [bulk.id],
      );
      await t.db.pool.query('ANALYZE assets');
      const plan = async (condition: Condition) => {
        const statement = assetSearchStatement(bulk.id, { filters: { must: [condition], should: [], must_not: [] }, sort: [], page: 1, pageSize: 100 });
        const { rows } = await t.db.pool.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
        return JSON.stringify(rows[0]!['QUERY PLAN']);
      };
      expect(await plan(c('asset', 'eq', 'H77.d77.example.com'))).toMatch(/assets_(organization_id_)?asset_lower_idx/);
      expect(await plan(c('asset', 'in', ['H77.d77.example.com', 'h78.d78.example.com']))).toMatch(/assets_(organization_id_)?asset_lower_idx/);
      expect(await plan(c('asset', 'startswith', 'H77'))).toContain('assets_asset_lower_idx');
      expect(await plan(c('asset', 'endswith', '.d7.EXAMPLE.com'))).toContain('assets_asset_lower_reversed_idx');
      expect(await plan(c('asset', 'wildcard', '*.d7.example.com'))).toContain('assets_asset_lower_reversed_idx');
      expect(await plan(c('asset', 'wildcard', 'h77*.example.com'))).toContain('assets_asset_lower_idx');
      expect(await plan(c('tags', 'contains_any', ['T7']))).toContain('assets_tags_lower_idx');
      expect(await plan(c('tags', 'contains_all', ['t7', 't8']))).toContain('assets_tags_lower_idx');
      expect(await plan(c('scopes', 'contains_any', ['new_open_port_detected']))).toContain('assets_scopes_idx');
    });

    it('keeps values out of the SQL text', () => {
      const statement = assetSearchStatement(org.id, {
        filters: { must: [c('asset', 'eq', "x'; DROP TABLE assets; --"), c('tags', 'wildcard', "o'*")], should: [], must_not: [] },
        sort: [],
        page: 1,
        pageSize: 25,
      });
      expect(statement.text).not.toContain('DROP TABLE');
      expect(statement.text).not.toContain("o'");
      expect(statement.values).toContain("x'; DROP TABLE assets; --");
    });
  });

  describe('sort', () => {
    const sorted = async (sort: unknown, filters?: unknown) => assetsOf({ sort, ...(filters ? { filters } : {}) });
    const byText = (values: string[]) => [...values].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));

    it('sorts by asset without regard to case, in both directions', async () => {
      expect(await sorted([{ field: 'asset', order: 'asc' }])).toEqual(byText(ALL));
      expect(await sorted([{ field: 'asset' }])).toEqual(byText(ALL));
      expect(await sorted([{ field: 'asset', order: 'desc' }])).toEqual(byText(ALL).reverse());
    });

    it('sorts by first_seen and last_seen, the asset breaking ties', async () => {
      expect(await sorted([{ field: 'first_seen', order: 'asc' }])).toEqual([
        'example.com', 'www.example.com', 'Mail.Example.com', 'example.org', 'api.example.com', 'a_b%c.example.com',
        'axbyc.example.com', '192.0.2.10', 'cdn.example.net',
      ]);
      expect(await sorted([{ field: 'last_seen', order: 'asc' }])).toEqual([
        'www.example.com', 'Mail.Example.com', 'example.org', 'api.example.com', 'a_b%c.example.com', 'axbyc.example.com',
        '192.0.2.10', 'cdn.example.net', 'example.com',
      ]);
      expect(await sorted([{ field: 'first_seen', order: 'desc' }])).toEqual([
        'cdn.example.net', '192.0.2.10', 'axbyc.example.com', 'a_b%c.example.com', 'api.example.com', 'example.org',
        'Mail.Example.com', 'www.example.com', 'example.com',
      ]);
    });

    it('sorts by asset_type (missing last) then by the next key, and by asset on ties', async () => {
      expect(await sorted([{ field: 'asset_type', order: 'asc' }])).toEqual([
        'example.com', 'example.org', // domain
        '192.0.2.10', // ip
        'a_b%c.example.com', 'api.example.com', 'axbyc.example.com', 'Mail.Example.com', 'www.example.com', // subdomain, by asset
        'cdn.example.net', // none
      ]);
      expect(await sorted([{ field: 'asset_type', order: 'desc' }, { field: 'last_seen', order: 'desc' }])).toEqual([
        'axbyc.example.com', 'a_b%c.example.com', 'api.example.com', 'Mail.Example.com', 'www.example.com', // subdomain, newest first
        '192.0.2.10',
        'example.com', 'example.org',
        'cdn.example.net',
      ]);
      // A field named twice counts once, the first time.
      expect(await sorted([{ field: 'asset', order: 'desc' }, { field: 'asset', order: 'asc' }])).toEqual(byText(ALL).reverse());
    });

    it('sorts the filtered results', async () => {
      expect(await sorted([{ field: 'asset', order: 'desc' }], { must: [c('asset_type', 'eq', 'domain')] })).toEqual(['example.org', 'example.com']);
    });
  });

  describe('pagination', () => {
    let big: TestOrg;
    const names = Array.from({ length: 60 }, (_, i) => `host-${String(i).padStart(2, '0')}.example.com`);

    beforeAll(async () => {
      big = await t.createOrg({ plan: EASM_PLAN });
      await ingest(names.map((name, i) => event(big.id, name, { occurred_at: new Date(Date.UTC(2026, 0, 1, 0, i % 7)).toISOString() })));
    });

    it('pages through every asset once, in order', async () => {
      const seen: string[] = [];
      for (const pageNumber of [1, 2, 3]) {
        const page = await search({ sort: [{ field: 'asset' }] }, `page=${pageNumber}&page_size=25`, big.key);
        expect(page).toMatchObject({ page: pageNumber, page_size: 25, result_count: 60 });
        expect(page.results).toHaveLength(pageNumber === 3 ? 10 : 25);
        seen.push(...page.results.map((item) => item.asset));
      }
      expect(seen).toEqual(names);
    });

    it('pages without overlap when the sort key repeats (the asset breaks ties)', async () => {
      const seen: string[] = [];
      for (const pageNumber of [1, 2, 3]) {
        seen.push(...(await search({}, `page=${pageNumber}&page_size=25`, big.key)).results.map((item) => item.asset));
      }
      expect(new Set(seen).size).toBe(60);
    });

    it('counts filtered results over all pages and answers an empty page past the end', async () => {
      const filters = { must: [c('asset', 'wildcard', 'host-1*')] };
      const first = await search({ filters }, 'page_size=25', big.key);
      expect(first).toMatchObject({ page: 1, page_size: 25, result_count: 10 });
      expect(await search({ filters }, 'page=2&page_size=25', big.key)).toEqual({ page: 2, page_size: 25, result_count: 10, results: [] });
      expect(await search({}, 'page=800', big.key)).toEqual({ page: 800, page_size: 100, result_count: 60, results: [] });
      expect((await search({}, 'page_size=100', big.key)).results).toHaveLength(60);
    });

    it.each([
      ['page=0', 'page', 'Ensure this value is greater than or equal to 1.'],
      ['page=801', 'page', 'Ensure this value is less than or equal to 800.'],
      ['page=two', 'page', 'A valid integer is required.'],
      ['page_size=24', 'page_size', 'Ensure this value is greater than or equal to 25.'],
      ['page_size=101', 'page_size', 'Ensure this value is less than or equal to 100.'],
      ['page_size=1.5', 'page_size', 'A valid integer is required.'],
    ])('refuses %s', async (query, param, message) => {
      const response = await t.api(org.key, 'POST', `${SEARCH}?${query}`, {});
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(invalid([{ param, details: [message] }]));
    });
  });

  describe('validation', () => {
    const refused = async (body: unknown) => {
      const response = await t.api(org.key, 'POST', SEARCH, body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toContain('application/json');
      return response.json();
    };

    it('names an unknown field, operator or misused operator at its condition', async () => {
      expect(await refused({ filters: { must: [c('severity', 'eq', 'high')] } })).toEqual(
        invalid([{ param: 'filters.must[0].name', details: ['"severity" is not a valid field. Use one of: asset, asset_type, tags, scopes, first_seen, last_seen.'] }]),
      );
      expect(await refused({ filters: { should: [{ name: 'asset', type: 'like', value: 'x' }] } })).toEqual(
        invalid([{ param: 'filters.should[0].type', details: ['"like" is not a valid choice.'] }]),
      );
      expect(await refused({ filters: { must_not: [c('asset', 'gte', 'a'), c('tags', 'contains_any', 'prod')] } })).toEqual(
        invalid([
          { param: 'filters.must_not[0].type', details: ['"gte" cannot be used on field "asset".'] },
          { param: 'filters.must_not[1].value', details: ['Expected a list of items but got type "str".'] },
        ]),
      );
      expect(await refused({ filters: { must: [c('last_seen', 'gte', 'yesterday')] } })).toEqual(
        invalid([{ param: 'filters.must[0].value', details: ['Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'] }]),
      );
      expect(await refused({ filters: { must: 'asset' } })).toEqual(invalid([{ param: 'filters.must', details: ['Expected a list of items but got type "str".'] }]));
      expect(await refused({ filters: [] })).toEqual(invalid([{ param: 'filters', details: ['Expected a dictionary of items but got type "list".'] }]));
    });

    it('refuses time-zone offsets beyond ±14:00 at the condition, before PostgreSQL sees them', async () => {
      const wrongFormat = 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].';
      for (const value of ['2026-01-01T00:00:00+99:99', '2026-01-01T00:00:00+2400', '2026-01-01T00:00-14:30', '2026-01-01T00:00:00+01:60']) {
        expect(await refused({ filters: { must: [c('asset', 'exists', true)], must_not: [c('first_seen', 'gte', '2020-01-01T00:00:00Z'), c('last_seen', 'lte', value)] } })).toEqual(
          invalid([{ param: 'filters.must_not[1].value', details: [wrongFormat] }]),
        );
      }
      for (const value of ['2026-01-01T00:00:00+14:00', '2026-01-01T00:00:00-1200', '2026-01-01T00:00+05:45']) {
        const response = await t.api(org.key, 'POST', SEARCH, { filters: { must: [c('last_seen', 'lte', value)] } });
        expect(response.statusCode, response.body).toBe(200);
      }
    });

    it('reports the problems of filters and sort in one answer', async () => {
      expect(await refused({ filters: { must: [c('data.port', 'eq', 1)] }, sort: [{ field: 'severity', order: 'up' }] })).toEqual(
        invalid([
          { param: 'filters.must[0].name', details: ['"data.port" is not a valid field. Use one of: asset, asset_type, tags, scopes, first_seen, last_seen.'] },
          { param: 'sort', details: ['"severity" is not a valid choice.', '"up" is not a valid choice.'] },
        ]),
      );
      expect(await refused({ sort: 'asset' })).toEqual(invalid([{ param: 'sort', details: ['Expected a list of items but got type "str".'] }]));
    });

    it('refuses malformed JSON', async () => {
      const response = await t.app.inject({ method: 'POST', url: SEARCH, headers: { apikey: org.key, 'content-type': 'application/json' }, payload: '{"filters":' });
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters[0].param).toBe('body');
    });
  });

  describe('documentation', () => {
    it('is in the OpenAPI document with its body, paging parameters and result', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const operation = doc.paths[SEARCH].post;
      expect(operation.security).toEqual([{ apikey: [] }]);
      expect(operation.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(['page', 'page_size']);
      const body = operation.requestBody.content['application/json'].schema;
      // The filters show the condition language's shape, not the validation keyword.
      expect(body.properties.filters.properties.must.items.properties.type.enum).toContain('contains_all');
      expect(body.properties.filters.description).toContain('first_seen');
      expect(body.properties.sort.items.properties.field.enum).toEqual(['asset', 'asset_type', 'first_seen', 'last_seen']);
      expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403', '429']);
      expect(JSON.stringify(doc)).not.toContain('x-asset-filters');
      const result = operation.responses['200'].content['application/json'].schema;
      expect(Object.keys(result.properties).sort()).toEqual(['page', 'page_size', 'result_count', 'results']);
    });
  });

  describe('access', () => {
    it('needs an API key', async () => {
      const response = await t.app.inject({ method: 'POST', url: SEARCH, payload: {} });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ message: 'No API key found in request' });
    });

    it('answers 403 when the plan lacks the easm group', async () => {
      const platformOnly = await t.createOrg();
      const lookupOnly = await t.createOrg({ plan: { groups: ['lookup'] } });
      for (const key of [platformOnly.key, lookupOnly.key]) {
        const response = await t.api(key, 'POST', SEARCH, {});
        expect(response.statusCode).toBe(403);
        expect(response.json()).toEqual({ message: 'You cannot consume this service', request_id: response.headers['service-request-id'] });
      }
    });

    it("shows an organization only its own assets", async () => {
      const mine = await search({ filters: { must: [c('asset', 'eq', 'www.example.com')] } });
      expect(mine.results).toEqual([expect.objectContaining({ asset: 'www.example.com', tags: ['production', 'web'], asset_type: 'subdomain' })]);
      const theirs = await search({}, '', other.key);
      expect(theirs).toMatchObject({ result_count: 1, results: [{ asset: 'www.example.com', tags: ['secret'], asset_type: 'secret' }] });
      expect((await search({ filters: { must: [c('tags', 'eq', 'secret')] } })).result_count).toBe(0);
      expect((await search({ filters: { must: [c('asset_type', 'eq', 'secret')] } }, '', org.key)).results).toEqual([]);
    });

    it('does not count against the monthly quota (lookup operations do)', async () => {
      const small = await t.createOrg({ plan: { ...EASM_PLAN, monthly_quota: 1 } });
      for (let i = 0; i < 3; i++) expect((await t.api(small.key, 'POST', SEARCH, {})).statusCode).toBe(200);
    });
  });
});
