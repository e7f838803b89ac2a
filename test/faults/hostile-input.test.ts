/**
 * Property-based tests: hostile input only ever gets a 4xx with an error body of decisions §1 (or a
 * 2xx when it happens to be valid), never a 500, never a stack trace or SQL in the body, and a 4xx
 * changes nothing in the database. Every property runs with a fixed seed, so a failure reproduces.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';

const RULES = '/v1/platform/notification-rules';
const INGEST = '/v1/ingest/events';
const SEED = 42;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** What must never reach a client: a stack frame, or the text of a PostgreSQL error. */
const LEAKS = ['    at ', 'syntax error', 'violates', 'relation "'];

const run = randomBytes(3).toString('hex');
let sequence = 0;
const newId = () => `hostile-${run}-${++sequence}`;

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

const SQL = ["'; DROP TABLE notification_rules; --", "' OR '1'='1", '1; SELECT pg_sleep(5)', '$1', "\\'", 'E\'\\x00\''];
const HTML = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '{{7*7}}', '${7*7}', '<!--'];
const UNICODE = ['\uD800', '\uDFFF', 'a\uD83D', '\u202Eevil\u202C', 'مرحبا بالعالم', '👩‍👩‍👧‍👦🔥', '\uFEFF', '\u0000', 'a\u0000b', '\u0007\u001b[31m'];
const NUMERIC_TEXT = ['NaN', 'Infinity', '-Infinity', '1e308', '-0', '0x10', '9'.repeat(400), ''];
const HUGE_STRING = 'x'.repeat(100_000);

/** Builds a value nested `depth` levels deep (arrays or objects). */
function nest(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(...SQL, ...HTML, ...UNICODE, ...NUMERIC_TEXT),
  fc.constant(HUGE_STRING),
);

/** Date-times at and past the edges of what parses and what PostgreSQL stores. */
const hostileDate = fc.oneof(
  fc.constantFrom('0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59-01:00', '+275760-09-13T00:00:00Z', '2026-02-29T00:00:00Z', '2024-02-29T24:00:00Z', '2026-11-20T10:15:00.1234567Z', '2026-11-20T10:15:00+24:00', '2026-11-20 10:15', '2026-11-20T10:15:00z', '20261120T101500Z', '1e308'),
  fc.date({ min: new Date(Date.UTC(-1, 0, 1)), max: new Date(Date.UTC(10_001, 0, 1)), noInvalidDate: true }).map((date) => date.toISOString()),
  fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: -1500, max: 1500 })).map(([y, m, d, off]) => {
    const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
    return `${pad(y, 4)}-${pad(m)}-${pad(d)}T00:00:00${off < 0 ? '-' : '+'}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`;
  }),
);

/** Spellings of a UUID (a real one when given) that some parsers accept and PostgreSQL may not. */
const uuidVariants = (real: () => string) =>
  fc.oneof(
    fc.uuid(),
    fc.constantFrom('urn:uuid:', '{', ' ', '\u0000', '').chain((prefix) =>
      fc.constantFrom((u: string) => `${prefix}${u}`, (u: string) => `${prefix}${u.toUpperCase()}`, (u: string) => `{${u}}`, (u: string) => u.replace(/-/g, ''), (u: string) => `${u} `, (u: string) => `${u}\n`).map((spell) => spell(real())),
    ),
  );

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileDate,
  { arbitrary: fc.anything({ maxDepth: 3 }), weight: 3 },
  { arbitrary: hostileString, weight: 3 },
  fc.constantFrom(1e308, -1e308, -0, 0, -1, 1.5, 2 ** 53 + 2, Number.MIN_VALUE, true, false, null, [], {}),
  fc.tuple(fc.integer({ min: 200, max: 300 }), fc.constantFrom('array' as const, 'object' as const)).map(([depth, kind]) => nest(depth, kind)),
  fc.constant(Array.from({ length: 20_000 }, (_, i) => i)),
  fc.constant(Array.from({ length: 2_000 }, () => randomUUID())),
  fc.array(hostileString, { maxLength: 5 }),
);

/** JSON text for a value; `__proto__`/`constructor` keys are spliced in as text (a JS literal would set the prototype). */
function toJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? 'null' : text;
}

const protoKeys = fc.constantFrom(
  '"__proto__": {"isAdmin": true, "organization_id": "x"}',
  '"constructor": {"prototype": {"polluted": true}}',
  '"__proto__": null',
  '"prototype": 1',
);
/** Adds a prototype-pollution key to the front of a JSON object text. */
const withProtoKey = (text: string, key: string) => (text.startsWith('{') && text !== '{}' ? `{${key},${text.slice(1)}` : `{${key}}`);

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/** Asserts the response is no 5xx, carries the request id, leaks nothing, and (for errors) has a §1 body. */
const statuses = new Map<string, number>();
function expectSafe(response: LightMyRequestResponse, allowed: readonly number[], label: string): void {
  const tally = `${label.split(' ')[0]} ${response.statusCode}`;
  statuses.set(tally, (statuses.get(tally) ?? 0) + 1);
  const context = `${label}: ${response.statusCode} ${response.body.slice(0, 500)}`;
  expect(response.statusCode, context).toBeLessThan(500);
  expect(allowed, context).toContain(response.statusCode);
  const requestId = response.headers['service-request-id'];
  expect(requestId, context).toMatch(UUID);
  for (const leak of LEAKS) expect(response.body.includes(leak), `${context} leaks ${JSON.stringify(leak)}`).toBe(false);
  if (response.statusCode < 400) return;
  expect(String(response.headers['content-type']), context).toBe('application/json; charset=utf-8');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  if ('message' in body) {
    expect(Object.keys(body).sort(), context).toEqual(['message', 'request_id']);
    expect(typeof body.message, context).toBe('string');
    expect(body.request_id, context).toBe(requestId);
  } else {
    expect(Object.keys(body).sort(), context).toEqual(['code', 'details', 'parameters', 'solution']);
    expect(body.code, context).toBe(10000 + response.statusCode);
    expect(body.details === null || typeof body.details === 'string', context).toBe(true);
    expect(Array.isArray(body.parameters), context).toBe(true);
    expect(typeof body.solution, context).toBe('string');
  }
}

const describeInput = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text);

// ---------------------------------------------------------------------------------------------

describe('hostile input (faults): 4xx with a §1 body, never a 500, nothing changed', () => {
  let t: TestApp;
  let org: TestOrg;
  let ruleId: string;
  let inputs = 0;

  const count = async (table: 'notification_rules' | 'notification_rule_members' | 'events' | 'organizations' | 'team_members' | 'api_keys') =>
    Number((await t.deps.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  const ruleCounts = async () => ({ rules: await count('notification_rules'), links: await count('notification_rule_members') });
  /** The stored rule as one JSON value, to see that a rejected PUT changed nothing. */
  const ruleRow = async (id: string) =>
    (await t.deps.db.pool.query<{ row: unknown }>('SELECT to_jsonb(r) AS row FROM notification_rules r WHERE id::text = $1', [id])).rows[0]?.row;

  const send = (method: 'POST' | 'PUT' | 'GET', url: string, payload?: string, contentType: string | null = 'application/json') => {
    inputs++;
    const headers: Record<string, string> = { apikey: org.key };
    if (contentType !== null) headers['content-type'] = contentType;
    return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
  };

  const validRule = (extra: Record<string, unknown> = {}) => ({
    name: 'Hostile baseline',
    scope: 'new_open_port_detected',
    members: [org.members[0]!.team_member_uuid],
    ...extra,
  });

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 3 });
    const created = await t.api(org.key, 'POST', RULES, validRule({ frequency: 'daily', strategy: { must: [{ name: 'severity', type: 'in', value: ['high'] }] } }));
    expect(created.statusCode, created.body).toBe(201);
    ruleId = created.json().id;
  });
  afterAll(async () => {
    console.info(`hostile-input: ${inputs} hostile requests sent`, Object.fromEntries([...statuses].sort()));
    await t?.close();
  });

  // -------------------------------------------------------------------------------------------
  // Regressions: minimal examples of bugs these properties found (each was a 500).
  // -------------------------------------------------------------------------------------------

  describe('regressions', () => {
    it('a member written as "urn:uuid:<uuid>" is a 400 on members, not a 500 from PostgreSQL', async () => {
      const before = await ruleCounts();
      const response = await t.api(org.key, 'POST', RULES, validRule({ members: [`urn:uuid:${org.members[0]!.team_member_uuid}`] }));
      expectSafe(response, [400], 'urn member');
      expect(response.json().parameters).toEqual([{ param: 'members', details: ['Must be a valid UUID.'] }]);
      expect(await ruleCounts()).toEqual(before);
    });

    it('name__contains=%00 is a 400 naming the parameter, not a 500', async () => {
      for (const param of ['name__contains', 'name__not_contains']) {
        const response = await t.api(org.key, 'GET', `${RULES}?${param}=a%00b`);
        expectSafe(response, [400], param);
        expect(response.json().parameters).toEqual([{ param, details: ['Null characters are not allowed.'] }]);
      }
    });

    it.each(['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00'])(
      'an event that occurred_at %s (outside years 1-9999 UTC) is a 400 that stores nothing, not a 500',
      async (occurredAt) => {
        const before = await count('events');
        const response = await t.app.inject({
          method: 'POST',
          url: INGEST,
          headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' },
          payload: { id: newId(), organization_id: org.id, scope: 'new_open_port_detected', occurred_at: occurredAt, asset: 'a.example.com', title: 't' },
        });
        expectSafe(response, [400], occurredAt);
        expect(response.json().parameters.map((p: { param: string }) => p.param)).toEqual(['occurred_at']);
        expect(await count('events')).toBe(before);
      },
    );

    it('the list accepts the edge years 0001 and 9999 in date filters', async () => {
      const response = await t.api(org.key, 'GET', `${RULES}?added_date__gte=0001-01-01T00:00:00Z&added_date__lte=9999-12-31T23:59:59Z`);
      expectSafe(response, [200], 'edge years');
    });
  });

  // -------------------------------------------------------------------------------------------
  // 1. Rule bodies
  // -------------------------------------------------------------------------------------------

  const RULE_FIELDS = ['name', 'scope', 'strategy', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'members', 'enabled'];

  /** Bodies as JSON text: anything, real fields with wrong types, a valid body with one field spoiled. */
  const ruleBody = (): fc.Arbitrary<string> =>
    fc.oneof(
      fc.anything({ maxDepth: 4 }).map(toJson),
      fc.dictionary(fc.constantFrom(...RULE_FIELDS, 'id', 'organization_id', 'added_date'), hostileValue, { maxKeys: 8 }).map(toJson),
      fc.tuple(fc.constantFrom(...RULE_FIELDS), hostileValue).map(([field, value]) => toJson(validRule({ [field]: value }))),
      fc.tuple(fc.constantFrom('must', 'should', 'must_not'), fc.record({ name: hostileValue, type: hostileValue, value: hostileValue }, { requiredKeys: [] }))
        .map(([clause, condition]) => toJson(validRule({ strategy: { [clause]: [condition] } }))),
      fc.tuple(fc.array(fc.oneof(hostileString, uuidVariants(() => org.members[0]!.team_member_uuid)), { maxLength: 3 }), fc.boolean())
        .map(([members, own]) => toJson(validRule({ members: own ? [...members, org.members[1]!.team_member_uuid] : members }))),
      fc.tuple(protoKeys, fc.boolean()).map(([key, valid]) => withProtoKey(toJson(valid ? validRule() : { name: 'x' }), key)),
    );

  /** Raw bodies that are not (valid) JSON, with the content type they are sent under. */
  const rawBody = fc.oneof(
    fc.constantFrom<[string | undefined, string | null]>(
      ['{', 'application/json'],
      ['{"name": "x", "scope": ', 'application/json'],
      ["{'name': 'x'}", 'application/json'],
      ['{"name": "x",}', 'application/json'],
      ['[1, 2', 'application/json'],
      ['nul', 'application/json'],
      ['"\\ud800"', 'application/json'],
      ['{"name": "\\u0000"}', 'application/json'],
      ['{"a": 1}{"b": 2}', 'application/json'],
      ['\u0000', 'application/json'],
      ['   ', 'application/json'],
      ['', 'application/json'],
      [undefined, 'application/json'],
      [undefined, null],
      ['', null],
      ['name=x&scope=new_open_port_detected', 'application/x-www-form-urlencoded'],
      ['name=x', 'text/plain'],
      ['{"name": "x"}', 'text/plain'],
      ['{"name": "x"}', 'application/xml'],
      ['{"name": "x"}', 'application/json; charset=latin1'],
      ['{"name": "x"}', 'application/json; charset=utf-16'],
      ['{"name": "x"}', 'application/jsonp'],
      ['{"name": "x"}', 'multipart/form-data; boundary=x'],
      ['{"name": "x"}', ';;;'],
      ['{"name": "x"}', ''],
      ['{"name": "x"}', 'application/json\u0000'],
      [`{"name": "${'[' .repeat(5000)}`, 'application/json'],
      [`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'application/json'],
      [`{"a": ${'{"a": '.repeat(20_000)}1${'}'.repeat(20_000)}}`, 'application/json'],
      [`"${'y'.repeat(2_000_000)}"`, 'application/json'],
    ),
    fc.tuple(fc.string({ maxLength: 50 }), fc.constant<string | null>('application/json')),
    fc.tuple(fc.string({ unit: 'binary', maxLength: 50 }), fc.constant<string | null>('application/json')),
    // Truncated valid JSON.
    fc.nat({ max: 200 }).map((cut): [string, string | null] => {
      const text = JSON.stringify({ name: 'x', scope: 'new_open_port_detected', members: [randomUUID()], strategy: { must: [] } });
      return [text.slice(0, Math.max(1, cut % text.length)), 'application/json'];
    }),
  );

  /** Ids for PUT: the real one, unknown ones, and hostile text (URL-encoded, or raw when it can be). */
  const hostileId = fc.oneof(
    fc.constant('__existing__'),
    fc.constantFrom( randomUUID(), '00000000-0000-0000-0000-000000000000', '0', '-1', '1e308', 'null', 'undefined', '%00', '%zz', '%', '%ED%A0%80', '..', '..%2F..%2Fadmin', '%2F', '%20', 'a'.repeat(3000), "1'%20OR%20'1'%3D'1", '%3Cscript%3E'),
    hostileString.filter((text) => text.length > 0 && text.length < 5000).map((text) => {
      try {
        return encodeURIComponent(text);
      } catch {
        return '%ED%A0%80'; // a lone surrogate cannot be encoded: send its (invalid UTF-8) bytes instead
      }
    }),
  );

  /** Sends one rule request and checks every invariant; returns the response. */
  async function checkRuleRequest(method: 'POST' | 'PUT', id: string | undefined, payload: string | undefined, contentType: string | null, label: string) {
    const before = await ruleCounts();
    const rowBefore = await ruleRow(ruleId);
    const url = method === 'POST' ? RULES : `${RULES}/${id === '__existing__' ? ruleId : id}`;
    const response = await send(method, url, payload, contentType);
    const ok = method === 'POST' ? 201 : 200;
    expectSafe(response, [ok, 400, 404, 413, 415], `${method} ${describeInput(url)} ${describeInput(String(payload))} (${String(contentType)}) [${label}]`);
    if (response.statusCode === 201) {
      // Valid by chance: it must be a real rule of this organization; remove it again.
      const removed = await t.api(org.key, 'DELETE', `${RULES}/${response.json().id}`);
      expect(removed.statusCode).toBe(204);
    } else if (response.statusCode >= 400) {
      expect(await ruleCounts(), `${method} ${describeInput(String(payload))} changed rows`).toEqual(before);
      expect(await ruleRow(ruleId), `${method} ${describeInput(String(payload))} changed the rule`).toEqual(rowBefore);
    }
    return response;
  }

  it('POST rules: arbitrary JSON bodies get a §1 4xx (or a 201 when valid) and change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(ruleBody(), async (body) => {
        await checkRuleRequest('POST', undefined, body, 'application/json', 'json');
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it('POST rules: raw non-JSON bodies and wrong content types get a §1 4xx and change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, async ([body, contentType]) => {
        await checkRuleRequest('POST', undefined, body, contentType, 'raw');
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('PUT rules/{id}: hostile ids and bodies get a §1 4xx (or a 200 when valid) and change nothing', async () => {
    const updateBody = fc.oneof(
      ruleBody(),
      fc.tuple(fc.constantFrom('name', 'members', 'enabled', 'frequency', 'delivery_hour', 'delivery_day_of_week', 'scope', 'strategy'), hostileValue)
        .map(([field, value]) => toJson({ name: 'Updated', members: [org.members[2]!.team_member_uuid], enabled: true, [field]: value })),
    );
    await fc.assert(
      fc.asyncProperty(hostileId, fc.oneof({ arbitrary: updateBody.map((b): [string | undefined, string | null] => [b, 'application/json']), weight: 4 }, rawBody), async (id, [body, contentType]) => {
        await checkRuleRequest('PUT', id, body, contentType, 'put');
      }),
      { seed: SEED, numRuns: 800 },
    );
  });

  // -------------------------------------------------------------------------------------------
  // 2. List query strings
  // -------------------------------------------------------------------------------------------

  it('GET rules: arbitrary query strings get a 200 or a §1 400, never a 500', async () => {
    const LIST_PARAMS = ['page', 'page_size', 'ordering', 'name__contains', 'name__not_contains', 'scope__in', 'scope__nin', 'frequency__in', 'frequency__nin', 'members__in', 'members__nin', 'enabled', 'added_date__lte', 'added_date__gte', 'last_update_date__lte', 'last_update_date__gte'];
    const encode = (text: string) => {
      try {
        return encodeURIComponent(text);
      } catch {
        return '%ED%A0%80';
      }
    };
    const value = fc.oneof(
      hostileString.filter((text) => text.length <= 10_000).map(encode),
      hostileDate.map(encode),
      uuidVariants(() => org.members[0]!.team_member_uuid).map(encode),
      fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%ED%A0%80', '&', '=', '==', '[]', '[0]=1', '+', '%2C%2C%2C', ',,,', '-', '--name', '-added_date,-', 'name,name,name', '9999999999999999999999', '-1', '0', '1.5', '1e3', 'TRUE', 'yes', '2026-13-45T99:99:99Z', '0000-00-00', '275760-09-13T00:00:00Z', '-271821-04-19T00:00:00Z', 'z'.repeat(10_000)),
    );
    const key = fc.oneof({ arbitrary: fc.constantFrom(...LIST_PARAMS), weight: 4 }, fc.string({ maxLength: 20 }).map(encode), fc.constantFrom('__proto__', 'constructor', 'page[]', 'a[b]', '%', ''));
    const query = fc.array(fc.tuple(key, value, fc.boolean()), { maxLength: 6 }).map((pairs) =>
      pairs.map(([k, v, bare]) => (bare && v.length % 3 === 0 ? k : `${k}=${v}`)).join('&'),
    );
    await fc.assert(
      fc.asyncProperty(query, fc.constantFrom('?', '??', '?&', '/?'), async (q, start) => {
        const response = await send('GET', `${RULES}${start}${q}`, undefined, null);
        expectSafe(response, [200, 400], `GET ?${describeInput(q)}`);
        if (response.statusCode === 200) expect(Array.isArray(response.json().results)).toBe(true);
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  // -------------------------------------------------------------------------------------------
  // 3. Ingest
  // -------------------------------------------------------------------------------------------

  describe('ingest', () => {
    const EVENT_FIELDS = ['id', 'organization_id', 'scope', 'occurred_at', 'asset', 'asset_type', 'severity', 'tags', 'title', 'summary', 'url', 'data'];
    const validEvent = () => ({
      id: newId(),
      organization_id: org.id,
      scope: 'new_open_port_detected',
      occurred_at: '2026-11-20T10:15:00Z',
      asset: 'mail.example.com',
      title: 'Port 3389 open',
    });
    const stored = async (events: Array<{ organization_id: unknown; id: unknown }>) => {
      const ids = events.map((event) => String(event.id));
      const rows = await t.deps.db.pool.query<{ organization_id: string; id: string }>('SELECT organization_id::text, id FROM events WHERE id = ANY($1::text[])', [ids]);
      return new Set(rows.rows.map((row) => `${row.organization_id}/${row.id}`));
    };

    /** An event: anything, a valid one with one field spoiled, or a valid one (fresh id). */
    const hostileEvent = fc.oneof(
      { arbitrary: fc.constant(null).map(() => validEvent() as Record<string, unknown>), weight: 1 },
      { arbitrary: fc.tuple(fc.constantFrom(...EVENT_FIELDS), hostileValue).map(([field, value]) => ({ ...validEvent(), [field]: value })), weight: 4 },
      hostileDate.map((occurred_at) => ({ ...validEvent(), occurred_at })),
      uuidVariants(() => org.id).map((organization_id) => ({ ...validEvent(), organization_id })),
      { arbitrary: fc.dictionary(fc.constantFrom(...EVENT_FIELDS, 'received_at', 'matched_at'), hostileValue, { maxKeys: 8 }), weight: 1 },
      { arbitrary: fc.oneof(fc.anything({ maxDepth: 2 }), hostileValue), weight: 1 },
      fc.constant(null).map(() => ({ ...validEvent(), data: { [HUGE_STRING]: 1 } })),
    );

    const ingestBody = fc.oneof(
      hostileEvent.map((event) => ({ text: toJson(event), events: [event] })),
      fc.array(hostileEvent, { maxLength: 6 }).map((events) => ({ text: toJson({ events }), events })),
      fc.tuple(fc.array(hostileEvent, { maxLength: 3 }), hostileValue).map(([events, extra]) => ({ text: toJson({ events, extra }), events })),
      hostileValue.map((value) => ({ text: toJson({ events: value }), events: [] as unknown[] })),
      fc.tuple(protoKeys, fc.constant(null)).map(([key]) => {
        const event = validEvent();
        return { text: withProtoKey(toJson(event), key), events: [event as unknown] };
      }),
      rawBody.map(([body]) => ({ text: body ?? '', events: [] as unknown[] })),
      // `data` nested 10,000 levels deep, written as text (JSON.stringify itself overflows the stack).
      fc.constantFrom(50, 10_000).map((depth) => {
        const event = validEvent();
        return { text: `${toJson(event).slice(0, -1)},"data":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`, events: [event as unknown] };
      }),
    );

    it('POST /v1/ingest/events: hostile events never get a 500; a 4xx stores nothing; a 202 stored every event', async () => {
      await fc.assert(
        fc.asyncProperty(ingestBody, async ({ text, events }) => {
          const before = await count('events');
          inputs++;
          const response = await t.app.inject({
            method: 'POST',
            url: INGEST,
            headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' },
            payload: text,
          });
          expectSafe(response, [202, 400, 413, 415], `ingest ${describeInput(text)}`);
          if (response.statusCode >= 400) {
            expect(await count('events'), `ingest ${describeInput(text)} stored rows after a ${response.statusCode}`).toBe(before);
          } else {
            const sent = events as Array<{ organization_id: unknown; id: unknown }>;
            expect(sent.length, `202 for ${describeInput(text)}`).toBeGreaterThan(0);
            const rows = await stored(sent);
            for (const event of sent) expect(rows.has(`${String(event.organization_id)}/${String(event.id)}`), `202 but not stored: ${describeInput(toJson(event))}`).toBe(true);
          }
        }),
        { seed: SEED, numRuns: 600 },
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  // 4. Admin API
  // -------------------------------------------------------------------------------------------

  describe('admin API', () => {
    let target: TestOrg;

    beforeAll(async () => {
      target = await t.createOrg({ memberCount: 1 });
    });

    const ORG_FIELDS = ['name', 'timezone', 'plan'];
    const adminBody = fc.oneof(
      fc.anything({ maxDepth: 3 }).map(toJson),
      fc.dictionary(fc.constantFrom(...ORG_FIELDS, 'email', 'is_default', 'id'), hostileValue, { maxKeys: 5 }).map(toJson),
      fc.tuple(fc.constantFrom('name', 'timezone', 'email', 'is_default'), hostileValue).map(([field, value]) => toJson({ name: 'Hostile', [field]: value })),
      fc.tuple(fc.constantFrom('groups', 'rate_limit_per_second', 'rate_limit_per_minute', 'monthly_quota', 'max_rules'), hostileValue).map(([field, value]) => toJson({ plan: { [field]: value } })),
      fc.constantFrom('{"timezone": "Mars/Olympus"}', '{"timezone": "../../etc/passwd"}', '{"timezone": "UTC\\u0000"}', '{"email": "a@b"}', '{"email": "\'; DROP TABLE team_members; --@x.com"}'),
      fc.tuple(protoKeys, fc.constant(null)).map(([key]) => withProtoKey('{"name": "Hostile"}', key)),
      rawBody.map(([body]) => body ?? ''),
    );
    const adminId = fc.oneof(fc.constantFrom('__org__', '__member__', '__key__'), hostileId);

    type Call = { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: (org: string, id: string) => string; body: boolean };
    const CALLS: Call[] = [
      { method: 'POST', path: () => '/admin/v1/organizations', body: true },
      { method: 'GET', path: (_o, id) => `/admin/v1/organizations/${id}`, body: false },
      { method: 'PATCH', path: (o) => `/admin/v1/organizations/${o}`, body: true },
      { method: 'PATCH', path: (_o, id) => `/admin/v1/organizations/${id}`, body: true },
      { method: 'POST', path: (o) => `/admin/v1/organizations/${o}/members`, body: true },
      { method: 'POST', path: (_o, id) => `/admin/v1/organizations/${id}/members`, body: true },
      { method: 'GET', path: (_o, id) => `/admin/v1/organizations/${id}/members`, body: false },
      { method: 'DELETE', path: (o, id) => `/admin/v1/organizations/${o}/members/${id}`, body: false },
      { method: 'POST', path: (o) => `/admin/v1/organizations/${o}/api-keys`, body: true },
      { method: 'GET', path: (_o, id) => `/admin/v1/organizations/${id}/api-keys`, body: false },
      { method: 'PATCH', path: (o, id) => `/admin/v1/organizations/${o}/api-keys/${id}`, body: true },
      { method: 'DELETE', path: (o, id) => `/admin/v1/organizations/${o}/api-keys/${id}`, body: false },
    ];

    it('operator endpoints: hostile bodies and ids never get a 500, always a §1 body', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...CALLS), adminId, adminBody, async (call, rawId, body) => {
          // The real ids are only used where the call cannot remove them (never in DELETE).
          const real = { __org__: target.id, __member__: target.members[0]!.team_member_uuid, __key__: target.keyId } as Record<string, string>;
          const id = real[rawId] !== undefined && call.method !== 'DELETE' ? real[rawId] : rawId.startsWith('__') ? randomUUID() : rawId;
          const url = call.path(target.id, id);
          inputs++;
          const response = await t.app.inject({
            method: call.method,
            url,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(call.body ? { 'content-type': 'application/json' } : {}) },
            ...(call.body ? { payload: body } : {}),
          });
          expectSafe(response, [200, 201, 204, 400, 404, 409, 413, 415], `${call.method} ${describeInput(url)} ${call.body ? describeInput(body) : ''}`);
        }),
        { seed: SEED, numRuns: 800 },
      );
    });
  });
});
