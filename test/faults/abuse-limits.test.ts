/**
 * Abuse of size: bodies over the limit, bodies that are not JSON, lists past their documented
 * lengths, and JSON nested 10,000 and 100,000 levels deep. Every route that takes a body is read
 * from the route table, so a new one is checked without being listed here. Each answer must be the
 * 4xx of decisions §1 (with service-request-id), never a 500, a bare Fastify body or a hang.
 */
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { expectApplicationError, fill, paramsOf, routeTable, UUID, type RouteEntry } from './abuse-support';

const RULES = '/v1/platform/notification-rules';
const INGEST = '/v1/ingest/events';
const BODY_LIMIT = 1024 * 1024;
const INGEST_BODY_LIMIT = 16 * 1024 * 1024;

/** A JSON object text of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  const frame = '{"name":"x","padding":""}';
  return `{"name":"x","padding":"${'a'.repeat(bytes - frame.length)}"}`;
}

function nest(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Who may call a route, from its path; a route no rule here covers fails the test. */
function credentials(route: RouteEntry, key: string, cookie: string): Record<string, string> | undefined {
  if (route.url.startsWith('/v1/ingest/')) return { authorization: `Bearer ${INGEST_TOKEN}` };
  if (/^\/v1\/(platform|easm|lookup)\//.test(route.url)) return { apikey: key };
  if (route.url.startsWith('/admin/v1/')) return { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (route.url.startsWith('/admin/queues')) return { cookie };
  // The unsubscribe page's credential is the signed token in its path.
  if (['/admin/login', '/admin/logout', '/unsubscribe/:token'].includes(route.url)) return {};
  return undefined;
}

/**
 * bull-board's JSON API (behind the operator session, /admin/queues/api) answers its own errors in the
 * shape its dashboard reads, `{error, message}`; everything else answers with decisions §1.
 */
function expectErrorOf(route: RouteEntry, response: LightMyRequestResponse, status: number, context = '') {
  const label = `${route.method} ${route.url} ${context}`;
  if (route.url.startsWith('/admin/queues/api/')) {
    expect(response.statusCode, `${label}: ${response.body}`).toBe(status);
    expect(response.headers['service-request-id'], label).toMatch(UUID);
    return undefined;
  }
  return expectApplicationError(response, status, label);
}

describe('limits (faults): bodies, lists and nesting', () => {
  let t: TestApp;
  let org: TestOrg;
  let cookie: string;
  let bodyRoutes: RouteEntry[];
  let baseUrl: string;
  let ids: Record<string, string>;
  let inputs = 0;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 2, plan: { groups: ['platform', 'lookup', 'easm'] } });
    const rule = await t.api(org.key, 'POST', RULES, { name: 'Limits', scope: 'new_issue_detected', members: [org.members[0]!.team_member_uuid] });
    expect(rule.statusCode, rule.body).toBe(201);
    ids = {
      rule_id: rule.json().id,
      org_id: org.id,
      key_id: org.keyId,
      team_member_uuid: org.members[1]!.team_member_uuid,
      delivery_id: randomUUID(),
      queueName: 'send',
      jobId: 'none',
      queueStatus: 'failed',
      schedulerId: 'none',
    };
    const login = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${ADMIN_TOKEN}&next=/admin/console`,
    });
    expect(login.statusCode).toBe(303);
    cookie = String(login.headers['set-cookie']).split(';')[0]!;
    bodyRoutes = routeTable(t.app).filter((route) => ['POST', 'PUT', 'PATCH'].includes(route.method));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    console.info(`abuse-limits: ${inputs} requests`);
  });

  const send = (method: string, url: string, headers: Record<string, string>, payload?: string | Buffer) => {
    inputs++;
    return t.app.inject({ method: method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });
  };

  /** A real HTTP request (chunked when `chunked`), so socket-level limits are what a client meets. */
  function http(method: string, path: string, headers: Record<string, string>, body: Buffer | string, options: { chunked?: boolean } = {}) {
    inputs++;
    return new Promise<LightMyRequestResponse>((resolve, reject) => {
      const req = httpRequest(`${baseUrl}${path}`, { method, headers: options.chunked ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ statusCode: res.statusCode!, headers: res.headers, body: text, json: () => JSON.parse(text) } as unknown as LightMyRequestResponse);
        });
      });
      // The server may answer 413 and close before the whole body is written.
      req.on('error', reject);
      if (options.chunked) {
        const data = Buffer.from(body);
        for (let offset = 0; offset < data.length; offset += 64 * 1024) req.write(data.subarray(offset, offset + 64 * 1024));
      } else req.write(body);
      req.end();
    });
  }

  it('knows who may call every route that takes a body', () => {
    expect(bodyRoutes.length).toBeGreaterThan(20);
    for (const route of bodyRoutes) expect(credentials(route, org.key, cookie), `${route.method} ${route.url}`).toBeDefined();
  });

  it('answers a JSON body one byte over the limit with 413 code 10413 on every route that takes a body', async () => {
    const over = jsonOfSize(BODY_LIMIT + 1);
    const overIngest = jsonOfSize(INGEST_BODY_LIMIT + 1);
    for (const route of bodyRoutes) {
      const headers = { ...credentials(route, org.key, cookie)!, 'content-type': 'application/json' };
      const url = fill(route.url, ids);
      const response = await send(route.method, url, headers, route.url === INGEST ? overIngest : over);
      expectErrorOf(route, response, 413);
    }
  });

  it('takes a body exactly at the limit (then judges its content)', async () => {
    const atLimit = await send('POST', RULES, { apikey: org.key, 'content-type': 'application/json' }, jsonOfSize(BODY_LIMIT));
    // Valid JSON, invalid rule: a 400 about the fields, not a 413.
    expect(expectApplicationError(atLimit, 400).parameters.map((p) => p.param)).toEqual(['scope']);
    const ingest = await send('POST', INGEST, { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' }, jsonOfSize(INGEST_BODY_LIMIT));
    expectApplicationError(ingest, 400);
  });

  it('answers 413 over real HTTP too: with Content-Length, chunked, and a Content-Length that only announces', async () => {
    const over = jsonOfSize(BODY_LIMIT + 1);
    const headers = { apikey: org.key, 'content-type': 'application/json' };
    expectApplicationError(await http('POST', RULES, headers, over), 413, 'content-length');
    expectApplicationError(await http('POST', RULES, headers, over, { chunked: true }), 413, 'chunked');
    expectApplicationError(await http('PUT', `${RULES}/${ids.rule_id}`, headers, over, { chunked: true }), 413, 'chunked PUT');
    expectApplicationError(await http('POST', '/admin/v1/organizations', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, over), 413, 'admin');
    expectApplicationError(await http('POST', INGEST, { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' }, jsonOfSize(INGEST_BODY_LIMIT + 1), { chunked: true }), 413, 'ingest');
    // A URL or headers past Node's 16 KiB: refused by the HTTP parser, still with a §1 body.
    expectApplicationError(await http('GET', `${RULES}?name__contains=${'a'.repeat(20_000)}`, { apikey: org.key }, ''), 431, 'long URL');
    expectApplicationError(await http('GET', RULES, { apikey: org.key, 'x-padding': 'p'.repeat(20_000) }, ''), 431, 'long header');
    // Announcing 2 GB is refused from the header alone, before any byte of it is read.
    const announced = await send('POST', RULES, { ...headers, 'content-length': String(2 * 1024 ** 3) }, '{}');
    expect([400, 413]).toContain(announced.statusCode);
    expectApplicationError(announced, announced.statusCode);
  });

  it('answers a form body over 8 KiB on the login with 413, not a login attempt', async () => {
    const response = await send('POST', '/admin/login', { 'content-type': 'application/x-www-form-urlencoded' }, `token=${'a'.repeat(9000)}`);
    expectApplicationError(response, 413);
  });

  it('answers malformed JSON with 400, param "body", on every route that takes a body', async () => {
    const broken = ['{', '{"name": "x",}', "{'name': 'x'}", '[1, 2', 'nul', '{"a": 1} trailing', '\u0000', '{"a": "\\u00"}', '{"a": 01}', '"unterminated'];
    for (const route of bodyRoutes) {
      const headers = { ...credentials(route, org.key, cookie)!, 'content-type': 'application/json' };
      for (const text of broken) {
        const response = await send(route.method, fill(route.url, ids), headers, text);
        const body = expectErrorOf(route, response, 400, JSON.stringify(text));
        if (body) expect(body.parameters.map((p) => p.param), `${route.url} ${JSON.stringify(text)}`).toEqual(['body']);
      }
    }
  });

  it('answers a body in another format with 415 code 10415 on every JSON route', async () => {
    const types = ['text/plain', 'application/xml', 'text/html', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/x-www-form-urlencoded', 'image/png', 'application/yaml'];
    for (const route of bodyRoutes) {
      const headers = credentials(route, org.key, cookie)!;
      for (const type of types) {
        // The operator pages (login, logout, the queue dashboard under its session) and the unsubscribe page take form bodies.
        if (/^\/(admin\/(login|logout|queues)|unsubscribe\/)/.test(route.url) && type === 'application/x-www-form-urlencoded') continue;
        const response = await send(route.method, fill(route.url, ids), { ...headers, 'content-type': type }, 'name=x&scope=y');
        expectErrorOf(route, response, 415, type);
      }
    }
  });

  it('answers a body without a Content-Type with 415 (rules, ingest, operators)', async () => {
    for (const [url, headers] of [
      [RULES, { apikey: org.key }],
      [INGEST, { authorization: `Bearer ${INGEST_TOKEN}` }],
      ['/admin/v1/organizations', { authorization: `Bearer ${ADMIN_TOKEN}` }],
    ] as const) {
      const response = await http('POST', url, headers, '{"name": "x"}');
      expectApplicationError(response, 415, url);
    }
  });

  describe('list lengths (decisions §3, §4, §5 and the documented limits)', () => {
    const member = () => org.members[0]!.team_member_uuid;
    const rule = (extra: Record<string, unknown>) => ({ name: 'Lengths', scope: 'new_issue_detected', members: [member()], ...extra });
    const post = (payload: unknown) => send('POST', RULES, { apikey: org.key, 'content-type': 'application/json' }, JSON.stringify(payload));
    const condition = { name: 'asset', type: 'eq', value: 'a.example.com' };

    it('members: 500 entries are taken (duplicates collapse), 501 are a 400 on members', async () => {
      const ok = await post(rule({ members: Array.from({ length: 500 }, member) }));
      expect(ok.statusCode, ok.body).toBe(201);
      expect(ok.json().members).toHaveLength(1);
      const tooMany = await post(rule({ members: Array.from({ length: 501 }, member) }));
      expect(paramsOf(tooMany)).toEqual(['members']);
      expect(expectApplicationError(tooMany, 400).parameters[0]!.details).toEqual(['Ensure this field has no more than 500 elements.']);
      const put = await send('PUT', `${RULES}/${ids.rule_id}`, { apikey: org.key, 'content-type': 'application/json' }, JSON.stringify({ name: 'x', enabled: true, members: Array.from({ length: 501 }, () => randomUUID()) }));
      expect(paramsOf(put)).toEqual(['members']);
      expectApplicationError(put, 400);
      // 20,000 of them (780 KB) are refused just as fast.
      const started = Date.now();
      expectApplicationError(await post(rule({ members: Array.from({ length: 20_000 }, () => randomUUID()) })), 400);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('strategy: 50 conditions per clause and 100 values per condition are taken, one more is a 400 naming the path', async () => {
      const fifty = Array.from({ length: 50 }, () => condition);
      const full = await post(rule({ strategy: { must: fifty, should: fifty, must_not: fifty } }));
      expect(full.statusCode, full.body).toBe(201);
      const clause = await post(rule({ strategy: { should: Array.from({ length: 51 }, () => condition) } }));
      expect(paramsOf(clause)).toEqual(['strategy.should']);
      expect(expectApplicationError(clause, 400).parameters[0]!.details).toEqual(['Ensure this field has no more than 50 elements.']);
      const values = await post(rule({ strategy: { must: [{ name: 'tags', type: 'contains_any', value: Array.from({ length: 101 }, (_, i) => `t${i}`) }] } }));
      expect(paramsOf(values)).toEqual(['strategy.must[0].value']);
      expect(expectApplicationError(values, 400).parameters[0]!.details).toEqual(['Ensure this field has no more than 100 elements.']);
      const long = await post(rule({ strategy: { must: [{ name: 'asset', type: 'eq', value: 'x'.repeat(1025) }] } }));
      expect(paramsOf(long)).toEqual(['strategy.must[0].value']);
      const huge = await post(rule({ strategy: { must: Array.from({ length: 15_000 }, () => condition) } }));
      expect(paramsOf(huge)).toEqual(['strategy.must']);
    });

    it('strategy: a 400 for many bad conditions lists each once, and stays small', async () => {
      const bad = Array.from({ length: 50 }, () => ({ name: 'nope', type: 'nope', value: 'x'.repeat(1024), extra: 1 }));
      const response = await post(rule({ strategy: { must: bad, should: bad, must_not: bad } }));
      const body = expectApplicationError(response, 400);
      expect(body.parameters.length).toBe(450);
      expect(response.body.length).toBeLessThan(100_000);
    });

    it('ingest: 1,000 events per batch, 1,001 is a 400 on events; 100 tags, 101 is a 400 naming the event', async () => {
      const event = (i: number, extra: Record<string, unknown> = {}) => ({
        id: `limits-${i}-${randomUUID()}`, organization_id: org.id, scope: 'new_issue_detected', occurred_at: '2026-01-01T00:00:00Z', asset: 'a.example.com', title: 't', ...extra,
      });
      const ingest = (payload: unknown) => send('POST', INGEST, { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' }, JSON.stringify(payload));
      const full = await ingest({ events: Array.from({ length: 1000 }, (_, i) => event(i)) });
      expect(full.statusCode, full.body.slice(0, 300)).toBe(202);
      const over = await ingest({ events: Array.from({ length: 1001 }, (_, i) => event(i)) });
      expect(paramsOf(over)).toEqual(['events']);
      expect(expectApplicationError(over, 400).parameters[0]!.details).toEqual(['Ensure this field has no more than 1000 elements.']);
      const tags = await ingest({ events: [event(0), event(1, { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) })] });
      expect(paramsOf(tags)).toEqual(['events[1].tags']);
      expectApplicationError(tags, 400);
      // 20,000 broken events: one 400 listing at most 50 problems, plus a note that there are more.
      const broken = await ingest({ events: Array.from({ length: 20_000 }, () => ({})) });
      const body = expectApplicationError(broken, 400);
      expect(body.parameters.length).toBeLessThanOrEqual(51);
    });

    it('operators: plan groups hold at most 3, an asset search sorts by at most 4 keys', async () => {
      const plan = await send('POST', '/admin/v1/organizations', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, JSON.stringify({ name: 'x', plan: { groups: ['platform', 'lookup', 'easm', 'platform'] } }));
      expect(paramsOf(plan)).toEqual(['plan.groups']);
      expectApplicationError(plan, 400);
      const sort = Array.from({ length: 5 }, () => ({ field: 'asset' }));
      const search = await send('POST', '/v1/easm/assets/search', { apikey: org.key, 'content-type': 'application/json' }, JSON.stringify({ sort }));
      expect(paramsOf(search)).toEqual(['sort']);
      expectApplicationError(search, 400);
    });

    it('list query: 10,000 repeated or comma-separated values are judged, not a 500', async () => {
      const many = Array.from({ length: 10_000 }, () => 'new_issue_detected');
      const repeated = await send('GET', `${RULES}?${many.map((s) => `scope__in=${s}`).join('&')}`, { apikey: org.key });
      expect(repeated.statusCode, repeated.body.slice(0, 200)).toBe(200);
      const uuids = Array.from({ length: 10_000 }, () => randomUUID()).join(',');
      expect((await send('GET', `${RULES}?members__in=${uuids}`, { apikey: org.key })).statusCode).toBe(200);
      const bad = await send('GET', `${RULES}?members__in=${uuids},nope&ordering=${'name,'.repeat(5000)}x`, { apikey: org.key });
      expect(paramsOf(bad).sort()).toEqual(['members__in', 'ordering']);
      expectApplicationError(bad, 400);
    });
  });

  describe('nesting', () => {
    const cases: Array<[string, string, (deep: string) => string, number]> = [
      ['strategy.must', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","members":["MEMBER"],"strategy":{"must":${deep}}}`, 400],
      ['strategy.must[0].value', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","members":["MEMBER"],"strategy":{"must":[{"name":"data.x","type":"eq","value":${deep}}]}}`, 400],
      ['strategy itself', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","members":["MEMBER"],"strategy":${deep}}`, 400],
      ['an unknown body field (ignored)', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","members":["MEMBER"],"extra":${deep}}`, 201],
      ['members', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","members":${deep}}`, 400],
      ['asset search filters', '/v1/easm/assets/search', (deep) => `{"filters":{"should":${deep}}}`, 400],
      ['ingest data', INGEST, (deep) => `{"id":"deep-${randomUUID()}","organization_id":"ORG","scope":"new_issue_detected","occurred_at":"2026-01-01T00:00:00Z","asset":"a","title":"t","data":{"x":${deep}}}`, 400],
      ['ingest events', INGEST, (deep) => `{"events":${deep}}`, 400],
      ['rule scope (an enum)', RULES, (deep) => `{"name":"x","scope":${deep},"members":["MEMBER"]}`, 400],
      ['rule frequency (an enum)', RULES, (deep) => `{"name":"x","scope":"new_issue_detected","frequency":${deep},"members":["MEMBER"]}`, 400],
      ['asset search sort field (an enum)', '/v1/easm/assets/search', (deep) => `{"sort":[{"field":${deep}}]}`, 400],
      ['operator plan groups', '/admin/v1/organizations', (deep) => `{"name":"x","plan":{"groups":${deep}}}`, 400],
    ];

    it.each(cases)('JSON nested 10,000 and 100,000 levels deep in %s is judged quickly, never a 500', async (_label, url, build, status) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (url === INGEST) headers.authorization = `Bearer ${INGEST_TOKEN}`;
      else if (url.startsWith('/admin')) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      else headers.apikey = org.key;
      for (const depth of [10_000, 100_000]) {
        for (const kind of ['array', 'object'] as const) {
          const text = build(nest(depth, kind)).replace('MEMBER', org.members[0]!.team_member_uuid).replace('ORG', org.id);
          const started = Date.now();
          const response = await send('POST', url, headers, text);
          const label = `${_label} ${kind} ×${depth}`;
          expect(Date.now() - started, label).toBeLessThan(3000);
          if (status === 201) {
            expect(response.statusCode, `${label}: ${response.body.slice(0, 300)}`).toBe(201);
            expect(response.headers['service-request-id']).toMatch(UUID);
          } else {
            expectApplicationError(response, status, label);
          }
        }
      }
      // The process is still answering afterwards.
      expect((await send('GET', RULES, { apikey: org.key })).statusCode).toBe(200);
    });
  });
});
