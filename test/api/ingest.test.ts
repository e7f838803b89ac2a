import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SCOPES, SEVERITIES, ValidationFailed, type EventRecord, type Scope } from '@notify/core';
import type { UnmatchedEvent } from '@notify/db';
import { createEventPublisher, IngestStage, LINGER_PROBE_MS, MATCH_IN_STORE_UP_TO, matchQueue, STORE_LINGER_UNTIL, type MatchInStore, type MatchQueueOptions, type ToMatch } from '@notify/pipeline';
import type { Queues } from '@notify/queues';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestApp, type TestOrg } from '../support/app';
import { pause } from '../support/wait';

const INGEST = '/v1/ingest/events';
const run = randomBytes(3).toString('hex');
let sequence = 0;
const newId = (prefix = 'evt') => `${prefix}-${run}-${++sequence}`;

/** A stored event: the event's fields, as stored, and ingest's own columns. */
type EventRow = EventRecord & { received_at: Date; matched_at: Date | null };

describe('POST /v1/ingest/events (decisions §5)', () => {
  let t: TestApp;
  let org: TestOrg;

  const ingest = (payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: INGEST,
      headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  const event = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    id: newId(),
    organization_id: org.id,
    scope: 'new_open_port_detected',
    occurred_at: '2026-11-20T10:15:00Z',
    asset: 'mail.example.com',
    title: 'Port 3389 (RDP) open on mail.example.com',
    ...overrides,
  });

  const rows = async (ids: readonly unknown[]) =>
    (await t.deps.db.pool.query<EventRow>('SELECT * FROM events WHERE id = ANY($1::text[]) ORDER BY received_at, id', [ids])).rows;
  const count = async (ids: readonly unknown[]) =>
    (await t.deps.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE id = ANY($1::text[])', [ids])).rows[0]!.n;
  const queued = async (scope: Scope) => {
    const jobs = await t.deps.queues.match.get(scope)!.getJobs(['waiting']);
    return jobs.flatMap((job) => job.data.events);
  };
  const validation = (parameters: unknown) => ({ code: 10400, details: null, parameters, solution: 'https://docs.example.test/notification-rules' });

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrg({ memberCount: 0 });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => t.close());

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}],
      ['a wrong token', { authorization: 'Bearer not-the-token' }],
      ['the admin token', { authorization: `Bearer ${ADMIN_TOKEN}` }],
      ['the token without "Bearer"', { authorization: INGEST_TOKEN }],
    ])('answers the gateway 401 for %s, and stores nothing', async (_case, headers) => {
      const body = event();
      const response = await t.app.inject({ method: 'POST', url: INGEST, headers, payload: body });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="ingest"');
      expect(response.json()).toEqual({ message: 'Unauthorized', request_id: response.headers['service-request-id'] });
      expect(await count([body.id])).toBe(0);
    });

    it('does not take a customer API key', async () => {
      const customer = await t.createOrg({ memberCount: 0 });
      const response = await t.app.inject({ method: 'POST', url: INGEST, headers: { apikey: customer.key }, payload: event() });
      expect(response.statusCode).toBe(401);
    });
  });

  describe('accepting events', () => {
    it('stores one event with every field and answers 202', async () => {
      const body = event({
        id: newId('full'),
        organization_id: org.id.toUpperCase(),
        scope: 'new_vulnerability_detected',
        occurred_at: '2026-11-20T11:15:00.123+01:00',
        asset: '  mail.example.com ',
        asset_type: 'subdomain',
        severity: 'high',
        tags: ['production', 'eu', 'production'],
        title: 'CVE-2026-0001 on mail.example.com',
        summary: 'Line one.\nLine two.',
        url: 'https://scanner.example.com/findings/42?tab=detail',
        data: { port: 3389, service: 'rdp', nested: { list: [1, 'two', null, true] } },
        fingerprint: ' mail.example.com:3389/tcp',
        not_a_field: 'ignored',
      });
      const response = await ingest(body);
      expect(response.statusCode).toBe(202);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual({ accepted: 1, duplicates: 0 });

      const [row, ...more] = await rows([body.id]);
      expect(more).toHaveLength(0);
      expect(row).toEqual({
        organization_id: org.id,
        id: body.id,
        scope: 'new_vulnerability_detected',
        occurred_at: new Date('2026-11-20T10:15:00.123Z'),
        asset: 'mail.example.com',
        asset_type: 'subdomain',
        severity: 'high',
        tags: ['production', 'eu'],
        title: 'CVE-2026-0001 on mail.example.com',
        summary: 'Line one.\nLine two.',
        url: 'https://scanner.example.com/findings/42?tab=detail',
        data: { port: 3389, service: 'rdp', nested: { list: [1, 'two', null, true] } },
        // Kept exactly as sent: it is an identity, not text to tidy.
        fingerprint: ' mail.example.com:3389/tcp',
        received_at: expect.any(Date),
        matched_at: null,
      });
      expect(Math.abs(row!.received_at.getTime() - Date.now())).toBeLessThan(60_000);
    });

    it('stores an event with only the required fields, optional ones null or empty', async () => {
      const body = event({ asset_type: null, severity: null, tags: null, summary: null, url: null, data: null, fingerprint: null });
      expect((await ingest(body)).statusCode).toBe(202);
      const [row] = await rows([body.id]);
      expect(row).toMatchObject({ asset_type: null, severity: null, tags: [], summary: null, url: null, data: null, fingerprint: null });
    });

    it('stores a batch of 1,000 events (a body over 1 MiB) with one 202', async () => {
      const events = Array.from({ length: 1000 }, (_, i) => event({ summary: `event ${i} `.padEnd(1100, '.'), tags: [`n${i % 7}`] }));
      const payload = JSON.stringify({ events });
      expect(payload.length).toBeGreaterThan(1024 * 1024);
      const response = await ingest(payload);
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({ accepted: 1000, duplicates: 0 });
      const stored = await rows(events.map((e) => e.id));
      expect(stored).toHaveLength(1000);
      expect(new Set(stored.map((row) => row.id))).toEqual(new Set(events.map((e) => e.id)));
      expect(stored.find((row) => row.id === events[999]!.id)!.tags).toEqual(['n5']);
    });

    it('accepts every field at its limit', async () => {
      const emoji = '🛰';
      const dataAtLimit = { k: 'x'.repeat(16 * 1024 - JSON.stringify({ k: '' }).length) };
      let deep: Record<string, unknown> = { leaf: 1 };
      for (let level = 1; level < 8; level++) deep = { a: deep };
      const url = `https://example.com/${'p'.repeat(2048 - 'https://example.com/'.length)}`;
      const events = [
        event({ id: emoji.repeat(128) }),
        event({ id: 'i'.repeat(128), asset: 'a'.repeat(1024), asset_type: 't'.repeat(64), title: 'T'.repeat(1024) }),
        event({ summary: 's'.repeat(10_000), url }),
        event({ tags: Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(128, 'g')) }),
        event({ data: dataAtLimit }),
        event({ data: deep }),
        ...SEVERITIES.map((severity) => event({ severity })),
        event({ asset: 'a', title: 't', asset_type: 'x', summary: 's', tags: ['x'] }),
      ];
      const response = await ingest({ events });
      expect(response.json()).toEqual({ accepted: events.length, duplicates: 0 });
      const stored = new Map((await rows(events.map((e) => e.id))).map((row) => [row.id, row]));
      expect(stored.size).toBe(events.length);
      expect(stored.get(emoji.repeat(128))).toBeDefined();
      expect(stored.get('i'.repeat(128))).toMatchObject({ asset: 'a'.repeat(1024), asset_type: 't'.repeat(64), title: 'T'.repeat(1024) });
      expect(stored.get(events[2]!.id as string)).toMatchObject({ summary: 's'.repeat(10_000), url });
      expect(stored.get(events[3]!.id as string)!.tags).toHaveLength(100);
      expect(stored.get(events[4]!.id as string)!.data).toEqual(dataAtLimit);
      expect(stored.get(events[5]!.id as string)!.data).toEqual(deep);
    });
  });

  describe('validation (all or nothing)', () => {
    const bad = '"nope" is not a valid choice.';
    const deep = (levels: number) => {
      let value: Record<string, unknown> = {};
      for (let level = 1; level < levels; level++) value = { a: value };
      return value;
    };
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['id missing', { id: undefined }, 'id', 'This field is required.'],
      ['id null', { id: null }, 'id', 'This field may not be null.'],
      ['id empty', { id: '' }, 'id', 'This field may not be blank.'],
      ['id over 128', { id: 'i'.repeat(129) }, 'id', 'Ensure this field has no more than 128 characters.'],
      ['id with a control character', { id: 'a\u0001b' }, 'id', 'Control characters are not allowed.'],
      ['id with a line break', { id: 'a\nb' }, 'id', 'Control characters are not allowed.'],
      ['title with a Unicode line separator', { title: 'a\u2028b' }, 'title', 'Control characters are not allowed.'],
      ['id a number', { id: 42 }, 'id', 'Not a valid string.'],
      ['organization_id missing', { organization_id: undefined }, 'organization_id', 'This field is required.'],
      ['organization_id not a UUID', { organization_id: 'org-1' }, 'organization_id', 'Must be a valid UUID.'],
      ['scope missing', { scope: undefined }, 'scope', 'This field is required.'],
      ['scope unknown', { scope: 'nope' }, 'scope', bad],
      ['occurred_at missing', { occurred_at: undefined }, 'occurred_at', 'This field is required.'],
      ['occurred_at not a date', { occurred_at: '2026-02-30T10:00:00Z' }, 'occurred_at', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'],
      ['occurred_at a number', { occurred_at: 1763633700 }, 'occurred_at', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'],
      ['asset missing', { asset: undefined }, 'asset', 'This field is required.'],
      ['asset blank', { asset: '   ' }, 'asset', 'This field may not be blank.'],
      ['asset over 1024', { asset: 'a'.repeat(1025) }, 'asset', 'Ensure this field has no more than 1024 characters.'],
      ['asset_type empty', { asset_type: '' }, 'asset_type', 'This field may not be blank.'],
      ['asset_type over 64', { asset_type: 't'.repeat(65) }, 'asset_type', 'Ensure this field has no more than 64 characters.'],
      ['severity unknown', { severity: 'nope' }, 'severity', bad],
      ['severity in capitals', { severity: 'HIGH' }, 'severity', '"HIGH" is not a valid choice.'],
      ['tags not a list', { tags: 'production' }, 'tags', 'Expected a list of items but got type "str".'],
      ['tags over 100', { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'tags', 'Ensure this field has no more than 100 elements.'],
      ['a tag over 128', { tags: ['ok', 'g'.repeat(129)] }, 'tags[1]', 'Ensure this field has no more than 128 characters.'],
      ['a tag empty', { tags: [''] }, 'tags[0]', 'This field may not be blank.'],
      ['a tag not a string', { tags: [7] }, 'tags[0]', 'Not a valid string.'],
      ['title missing', { title: undefined }, 'title', 'This field is required.'],
      ['title over 1024', { title: 'T'.repeat(1025) }, 'title', 'Ensure this field has no more than 1024 characters.'],
      ['summary over 10000', { summary: 's'.repeat(10_001) }, 'summary', 'Ensure this field has no more than 10000 characters.'],
      ['summary empty', { summary: '' }, 'summary', 'This field may not be blank.'],
      ['url over 2048', { url: `https://example.com/${'p'.repeat(2049 - 'https://example.com/'.length)}` }, 'url', 'Ensure this field has no more than 2048 characters.'],
      ['url relative', { url: '/findings/42' }, 'url', 'Enter a valid URL.'],
      ['url without a scheme', { url: 'example.com/findings' }, 'url', 'Enter a valid URL.'],
      ['url ftp', { url: 'ftp://example.com/file' }, 'url', 'Enter a valid URL.'],
      ['url javascript', { url: 'javascript:alert(1)' }, 'url', 'Enter a valid URL.'],
      ['url with a space', { url: 'https://example.com/a b' }, 'url', 'Enter a valid URL.'],
      ['data a list', { data: [1, 2] }, 'data', 'Invalid data. Expected a dictionary, but got list.'],
      ['data a string', { data: '{"port": 1}' }, 'data', 'Invalid data. Expected a dictionary, but got str.'],
      ['data over 16 KiB', { data: { k: 'x'.repeat(16 * 1024 - JSON.stringify({ k: '' }).length + 1) } }, 'data', 'Ensure this field has no more than 16384 bytes when serialized as JSON.'],
      ['data nested 9 levels', { data: deep(9) }, 'data', 'Ensure this field is nested no more than 8 levels deep.'],
    ];

    it.each(cases)('refuses a single event with %s, naming the field', async (_case, overrides, param, message) => {
      const body = event(overrides);
      const response = await ingest(body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([{ param, details: [message] }]));
      if (typeof body.id === 'string') expect(await count([body.id])).toBe(0);
    });

    it('refuses a batch with one invalid event, names its index, and stores none of it', async () => {
      const events = [event(), event(), event({ scope: 'nope' }), event()];
      const response = await ingest({ events });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([{ param: 'events[2].scope', details: [bad] }]));
      expect(await count(events.map((e) => e.id))).toBe(0);
    });

    it('reports every invalid event of a batch in one answer', async () => {
      const events = cases.map(([, overrides]) => event(overrides));
      const response = await ingest({ events: [event(), ...events] });
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters).toEqual(cases.map(([, , param, message], i) => ({ param: `events[${i + 1}].${param}`, details: [message] })));
    });

    it('lists at most 50 problems', async () => {
      const response = await ingest({ events: Array.from({ length: 1000 }, () => event({ title: undefined, asset: undefined })) });
      expect(response.statusCode).toBe(400);
      const parameters = response.json().parameters;
      expect(parameters).toHaveLength(51);
      expect(parameters[48]).toEqual({ param: 'events[24].asset', details: ['This field is required.'] });
      expect(parameters[50]).toEqual({ param: 'body', details: ['Only the first 50 problems are reported.'] });
    });

    it.each([
      ['1,001 events', Array.from({ length: 1001 }, () => ({})), 'Ensure this field has no more than 1000 elements.'],
      ['no events', [], 'This list may not be empty.'],
      ['events that is not a list', { id: 'x' }, 'Expected a list of items but got type "dict".'],
      ['events null', null, 'This field may not be null.'],
    ])('answers 400 on events for %s', async (_case, events, message) => {
      const response = await ingest({ events });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([{ param: 'events', details: [message] }]));
    });

    it('answers 400 on events for 1,001 valid events, storing none', async () => {
      const events = Array.from({ length: 1001 }, () => event());
      const response = await ingest({ events });
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters).toEqual([{ param: 'events', details: ['Ensure this field has no more than 1000 elements.'] }]);
      expect(await count(events.map((e) => e.id))).toBe(0);
    });

    it('names a batch item that is not an object', async () => {
      const response = await ingest({ events: [event(), 'event', [event()]] });
      expect(response.json().parameters).toEqual([
        { param: 'events[1]', details: ['Invalid data. Expected a dictionary, but got str.'] },
        { param: 'events[2]', details: ['Invalid data. Expected a dictionary, but got list.'] },
      ]);
    });

    it('answers an empty body with the required fields', async () => {
      const response = await ingest('');
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters.map((p: { param: string }) => p.param)).toEqual(['id', 'organization_id', 'scope', 'occurred_at', 'asset', 'title']);
    });

    it.each([
      ['a JSON array', '[]', 'Invalid data. Expected a dictionary, but got list.'],
      ['JSON null', 'null', 'Invalid data. Expected a dictionary, but got null.'],
    ])('answers 400 on body for %s', async (_case, payload, message) => {
      const response = await ingest(payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([{ param: 'body', details: [message] }]));
    });

    it('answers malformed JSON with 400 on body', async () => {
      const response = await ingest('{"events": [');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([{ param: 'body', details: [expect.stringMatching(/^JSON parse error - /)] }]));
    });

    it('refuses NUL characters, escaped or raw, and stores nothing', async () => {
      const escaped = event();
      const withEscape = JSON.stringify(escaped).replace('"title":"', '"title":"\\u0000');
      const response = await ingest(withEscape);
      expect(response.statusCode).toBe(400);
      expect(response.json().parameters).toEqual([{ param: 'body', details: [expect.stringContaining('NUL')] }]);

      const raw = event();
      const withRaw = JSON.stringify(raw).replace('"title":"', '"title":"\u0000');
      const rawResponse = await ingest(withRaw);
      expect(rawResponse.statusCode).toBe(400);
      expect(rawResponse.json().parameters[0].param).toBe('body');
      expect(await count([escaped.id, raw.id])).toBe(0);
    });

    it('answers 415 for a body that is not JSON', async () => {
      const response = await ingest('id=1', { 'content-type': 'text/plain' });
      expect(response.statusCode).toBe(415);
      expect(response.json().code).toBe(10415);
    });

    it('answers 413 for a body over 16 MiB', async () => {
      const payload = JSON.stringify({ events: [event({ summary: 'x'.repeat(16 * 1024 * 1024) })] });
      const response = await ingest(payload);
      expect(response.statusCode).toBe(413);
      expect(response.json().code).toBe(10413);
    });
  });

  describe('requests that come together (INGEST_LINGER_MS)', () => {
    const LINGER_MS = 300;
    let lingering: TestApp;
    beforeAll(async () => {
      lingering = await startTestApp({ INGEST_LINGER_MS: String(LINGER_MS) }, { db: t.db });
    });
    afterAll(async () => lingering.close());

    const send = (body: Record<string, unknown>) =>
      lingering.app.inject({ method: 'POST', url: INGEST, headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    /** Sends one single-event request every `gapMs`, and expects each answered 202. */
    const spaced = async (events: ReadonlyArray<Record<string, unknown>>, gapMs: number) => {
      const answers = [];
      for (const body of events) {
        answers.push(send(body));
        await pause(gapMs);
      }
      const responses = await Promise.all(answers);
      expect(responses.map((response) => response.statusCode)).toEqual(events.map(() => 202));
    };
    /** The distinct arrival times of the events: one per statement that stored them. */
    const statements = async (events: ReadonlyArray<Record<string, unknown>>) =>
      new Set((await rows(events.map((e) => e.id))).map((row) => row.received_at.getTime())).size;

    it('share one statement and one match job while they come together, and a caller alone is held up once, not on every request', async () => {
      // A caller alone: its first request waits (a probe that gathers nothing), the next go at once.
      const lone = [event(), event(), event()];
      const probeStart = performance.now();
      await spaced(lone.slice(0, 1), 0);
      expect(performance.now() - probeStart).toBeGreaterThanOrEqual(LINGER_MS - 5);
      for (const body of lone.slice(1)) {
        const start = performance.now();
        expect((await send(body)).statusCode).toBe(202);
        expect(performance.now() - start).toBeLessThan(LINGER_MS);
      }
      expect(await statements(lone)).toBe(3);
      // A second later the next request probes again; requests that come meanwhile join it, and
      // from then on every small request waits for company.
      await pause(LINGER_PROBE_MS);
      const together = Array.from({ length: 4 }, () => event());
      await spaced(together, 20);
      expect(await statements(together)).toBe(1);
      // ... and one match job (this app runs no match role: its events go to the scope's queue).
      const jobs = await lingering.deps.queues.match.get('new_open_port_detected')!.getJobs(['waiting']);
      const ids = new Set(together.map((e) => e.id));
      expect(jobs.filter((job) => job.data.events.some(([, id]) => ids.has(id))).map((job) => job.data.events.length)).toEqual([4]);
      const after = Array.from({ length: 4 }, () => event());
      await spaced(after, 20);
      expect(await statements(after)).toBe(1);
      // Operators see it: two statements of four calls, three of one.
      const histogram = await lingering.deps.metrics.registry.getSingleMetric('notify_ingest_statement_calls')!.get();
      const bucket = (le: number) => (histogram.values as Array<{ metricName?: string; labels: Record<string, unknown>; value: number }>)
        .find((v) => v.metricName === 'notify_ingest_statement_calls_bucket' && v.labels.le === le)!.value;
      expect([bucket(1), bucket(3), bucket(4)]).toEqual([3, 3, 5]);
      // A request of STORE_LINGER_UNTIL events (50) or more never waits.
      const big = Array.from({ length: STORE_LINGER_UNTIL }, () => event());
      const start = performance.now();
      expect((await send({ events: big })).statusCode).toBe(202);
      expect(performance.now() - start).toBeLessThan(LINGER_MS);
    });
  });

  describe('organizations', () => {
    it('refuses unknown organizations at their index, and stores nothing', async () => {
      const ghost = randomUUID();
      const other = randomUUID();
      const events = [event(), event({ organization_id: ghost }), event(), event({ organization_id: other }), event({ organization_id: ghost })];
      const response = await ingest({ events });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validation([
        { param: 'events[1].organization_id', details: [`Invalid pk "${ghost}" - object does not exist.`] },
        { param: 'events[3].organization_id', details: [`Invalid pk "${other}" - object does not exist.`] },
        { param: 'events[4].organization_id', details: [`Invalid pk "${ghost}" - object does not exist.`] },
      ]));
      expect(await count(events.map((e) => e.id))).toBe(0);
    });

    it('answers concurrent requests each on its own: they share a statement, the one with an unknown organization alone fails, and an event sent by two counts once', async () => {
      const shared = event();
      const good = Array.from({ length: 12 }, () => event());
      const ghost = randomUUID();
      const bad = [event(), event({ organization_id: ghost })];
      const responses = await Promise.all([
        ingest({ events: [shared, ...good.slice(0, 6)] }),
        ingest({ events: bad }),
        ingest({ events: [...good.slice(6), shared] }),
        ingest(shared),
      ]);
      expect(responses.map((response) => response.statusCode)).toEqual([202, 400, 202, 202]);
      expect(responses[1]!.json()).toEqual(validation([{ param: 'events[1].organization_id', details: [`Invalid pk "${ghost}" - object does not exist.`] }]));
      const answers = [responses[0]!, responses[2]!, responses[3]!].map((response) => response.json() as { accepted: number; duplicates: number });
      // The shared event is stored once: one request has it as accepted, the others as a duplicate.
      expect(answers.reduce((sum, answer) => sum + answer.accepted, 0)).toBe(13);
      expect(answers.reduce((sum, answer) => sum + answer.duplicates, 0)).toBe(2);
      expect(answers[0]!.accepted + answers[0]!.duplicates).toBe(7);
      expect(answers[1]!.accepted + answers[1]!.duplicates).toBe(7);
      expect(await count([shared.id, ...good.map((e) => e.id)])).toBe(13);
      expect(await count(bad.map((e) => e.id))).toBe(0);
      const waiting = await queued('new_open_port_detected');
      for (const e of [shared, ...good]) expect(waiting.filter(([, id]) => id === e.id)).toHaveLength(1);
    });

    it('lists at most 50 unknown organizations', async () => {
      const response = await ingest({ events: Array.from({ length: 60 }, () => event({ organization_id: randomUUID() })) });
      const parameters = response.json().parameters;
      expect(parameters).toHaveLength(51);
      expect(parameters[49].param).toBe('events[49].organization_id');
      expect(parameters[50]).toEqual({ param: 'body', details: ['Only the first 50 problems are reported.'] });
    });

    it('names organization_id alone for a single event', async () => {
      const ghost = randomUUID();
      const response = await ingest(event({ organization_id: ghost }));
      expect(response.json().parameters).toEqual([{ param: 'organization_id', details: [`Invalid pk "${ghost}" - object does not exist.`] }]);
    });

    it('keeps ids apart per organization', async () => {
      const second = await t.createOrg({ memberCount: 0 });
      const id = newId('shared');
      const response = await ingest({ events: [event({ id }), event({ id, organization_id: second.id })] });
      expect(response.json()).toEqual({ accepted: 2, duplicates: 0 });
      expect((await rows([id])).map((row) => row.organization_id).sort()).toEqual([org.id, second.id].sort());
    });
  });

  describe('re-sending', () => {
    it('answers 202 for events already stored, counts them as duplicates and keeps the first version', async () => {
      const events = [event({ title: 'first' }), event({ title: 'first' })];
      expect((await ingest({ events })).json()).toEqual({ accepted: 2, duplicates: 0 });
      const again = await ingest({ events: [...events.map((e) => ({ ...e, title: 'second' })), event()] });
      expect(again.statusCode).toBe(202);
      expect(again.json()).toEqual({ accepted: 1, duplicates: 2 });
      const stored = await rows(events.map((e) => e.id));
      expect(stored.map((row) => row.title)).toEqual(['first', 'first']);
      const single = await ingest(events[0]);
      expect(single.json()).toEqual({ accepted: 0, duplicates: 1 });
    });

    it('collapses repeated ids within one batch to the first', async () => {
      const id = newId('twice');
      const response = await ingest({ events: [event({ id, title: 'one' }), event(), event({ id, title: 'two' })] });
      expect(response.json()).toEqual({ accepted: 2, duplicates: 1 });
      const stored = await rows([id]);
      expect(stored.map((row) => row.title)).toEqual(['one']);
    });

    it('treats the organization id case-insensitively', async () => {
      const body = event();
      expect((await ingest(body)).json()).toEqual({ accepted: 1, duplicates: 0 });
      expect((await ingest({ ...body, organization_id: org.id.toUpperCase() })).json()).toEqual({ accepted: 0, duplicates: 1 });
    });
  });

  describe('publishing to matching', () => {
    it('publishes each new event once, to its scope queue, as [organization_id, id] pairs', async () => {
      const ports = [event({ scope: 'new_open_port_detected' }), event({ scope: 'new_open_port_detected' })];
      const dns = [event({ scope: 'asset_dns_changed' })];
      const response = await ingest({ events: [ports[0], dns[0], ports[1]] });
      expect(response.json()).toEqual({ accepted: 3, duplicates: 0 });

      const mine = (pairs: Array<[string, string]>, ids: unknown[]) => pairs.filter(([, id]) => ids.includes(id));
      expect(mine(await queued('new_open_port_detected'), ports.map((e) => e.id))).toEqual(ports.map((e) => [org.id, e.id]));
      expect(mine(await queued('asset_dns_changed'), dns.map((e) => e.id))).toEqual([[org.id, dns[0]!.id]]);
      expect(mine(await queued('asset_ssl_changed'), [...ports, ...dns].map((e) => e.id))).toEqual([]);

      // A re-send stores nothing new, so it publishes nothing.
      await ingest({ events: [...ports, ...dns] });
      expect(mine(await queued('new_open_port_detected'), ports.map((e) => e.id))).toHaveLength(2);
    });

    it('reaches every scope queue', async () => {
      const events = SCOPES.map((scope) => event({ scope }));
      expect((await ingest({ events })).json()).toEqual({ accepted: SCOPES.length, duplicates: 0 });
      for (const [i, scope] of SCOPES.entries()) {
        expect(await queued(scope), scope).toContainEqual([org.id, events[i]!.id]);
      }
    });

    it('publishes only after the events are stored', async () => {
      const body = event();
      let storedWhenPublished: number | undefined;
      const publish = t.deps.queues.requestMatch.bind(t.deps.queues);
      vi.spyOn(t.deps.queues, 'requestMatch').mockImplementation(async (scope, pairs) => {
        storedWhenPublished = await count(pairs.map(([, id]) => id));
        return publish(scope, pairs);
      });
      expect((await ingest(body)).statusCode).toBe(202);
      expect(storedWhenPublished).toBe(1);
    });

    it('still answers 202 when publishing fails: the events are stored, unmatched, for the reconciler', async () => {
      const spy = vi.spyOn(t.deps.queues, 'requestMatch').mockRejectedValue(new Error('Connection is closed.'));
      const events = [event(), event({ scope: 'asset_dns_changed' })];
      const response = await ingest({ events });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({ accepted: 2, duplicates: 0 });
      expect(spy).toHaveBeenCalledTimes(2);
      const stored = await rows(events.map((e) => e.id));
      expect(stored).toHaveLength(2);
      expect(stored.every((row) => row.matched_at === null)).toBe(true);
    });

    it('does not publish anything for a refused batch', async () => {
      const spy = vi.spyOn(t.deps.queues, 'requestMatch');
      await ingest({ events: [event(), event({ organization_id: randomUUID() })] });
      await ingest({ events: [event(), event({ title: '' })] });
      expect(spy).not.toHaveBeenCalled();
    });
  });

  describe('the ingest stage and the in-platform publisher', () => {
    /** An ingest stage of its own, its events to the match queues (or to `toMatch`). */
    const ctx = (options: MatchQueueOptions & { queues?: Pick<Queues, 'requestMatch'>; toMatch?: ToMatch; matchInStore?: MatchInStore } = {}): IngestStage =>
      new IngestStage({ db: t.deps.db }, { toMatch: options.toMatch ?? matchQueue({ queues: options.queues ?? t.deps.queues }, options), matchInStore: options.matchInStore });

    it('does not wait on a Redis that never answers', async () => {
      const errors: unknown[] = [];
      const hanging = { requestMatch: () => new Promise<void>(() => {}) };
      const publisher = createEventPublisher(ctx({ queues: hanging, publishTimeoutMs: 50, onPublishError: (error) => errors.push(error) }));
      const id = newId('hang');
      const started = Date.now();
      const result = await publisher.publish({ id, organizationId: org.id, scope: 'new_asset_added', occurredAt: new Date(), asset: 'a.example.com', title: 'New asset' });
      expect(result).toEqual({ accepted: 1, duplicates: 0 });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(errors).toHaveLength(1);
      expect(await count([id])).toBe(1);
    });

    it('publishes camelCase events through the same validator, naming wire fields', async () => {
      const publisher = createEventPublisher(ctx());
      const id = newId('platform');
      const occurredAt = new Date('2026-11-20T10:15:00.250Z');
      const input = { id, organizationId: org.id, scope: 'new_asset_discovered' as const, occurredAt, asset: 'new.example.com', assetType: 'subdomain', tags: ['auto'], title: 'New asset', data: { source: 'crawler' } };
      expect(await publisher.publish(input)).toEqual({ accepted: 1, duplicates: 0 });
      expect(await publisher.publish([input])).toEqual({ accepted: 0, duplicates: 1 });
      const [row] = await rows([id]);
      expect(row).toMatchObject({ scope: 'new_asset_discovered', occurred_at: occurredAt, asset_type: 'subdomain', tags: ['auto'], data: { source: 'crawler' } });
      expect(await queued('new_asset_discovered')).toContainEqual([org.id, id]);

      const invalid = publisher.publish([input, { ...input, id: newId(), occurredAt: new Date(Number.NaN), title: '' }]);
      await expect(invalid).rejects.toBeInstanceOf(ValidationFailed);
      await expect(invalid).rejects.toMatchObject({
        parameters: [
          { param: 'events[1].occurred_at', details: [expect.stringMatching(/^Datetime has wrong format/)] },
          { param: 'events[1].title', details: ['This field may not be blank.'] },
        ],
      });
      await expect(publisher.publish({ ...input, id: newId(), organizationId: randomUUID() })).rejects.toMatchObject({
        parameters: [{ param: 'organization_id', details: [expect.stringMatching(/^Invalid pk/)] }],
      });
    });

    it('hands stored events to matching, scope by scope: what this process declines goes to the queue', async () => {
      const taken: Array<[Scope, Array<[string, string]>]> = [];
      const queue = matchQueue(t.deps);
      const toMatch: ToMatch = {
        hand: async (scope, pairs) => {
          if (scope === 'asset_dns_changed') return queue.hand(scope, pairs);
          taken.push([scope, pairs]);
        },
      };
      const here = { id: newId('here'), organizationId: org.id, scope: 'new_asset_added' as const, occurredAt: new Date(), asset: 'a.example.com', title: 'New asset' };
      const declined = { ...here, id: newId('declined'), scope: 'asset_dns_changed' as const };
      expect(await createEventPublisher(ctx({ toMatch })).publish([here, declined])).toEqual({ accepted: 2, duplicates: 0 });
      expect(taken).toEqual([['new_asset_added', [[org.id, here.id]]]]);
      expect(await queued('new_asset_added')).not.toContainEqual([org.id, here.id]);
      expect(await queued('asset_dns_changed')).toContainEqual([org.id, declined.id]);
      // Stored before either: what this process took and fails to match, the reconciler finds unmatched.
      expect((await rows([here.id, declined.id])).map((row) => row.matched_at)).toEqual([null, null]);
    });

    describe('matching in the transaction that stores the events (matchInStore)', () => {
      const at = new Date('2026-11-20T10:00:00.000Z');
      const platformEvent = (name: string, occurredAt: Date, scope: Scope = 'new_asset_added') =>
        ({ id: newId(name), organizationId: org.id, scope, occurredAt, asset: `${name}.example.com`, title: 'New asset', data: { n: name } });
      /** A matcher that records what it got, whether the events were visible outside its transaction then, and when its after-commit step ran. */
      const recordingMatcher = (options: { fail?: Error; open?: boolean } = {}) => {
        const seen: Array<{ events: UnmatchedEvent[]; visibleOutside: number }> = [];
        const failures: Array<[unknown, number]> = [];
        let finished = 0;
        const matcher: MatchInStore = {
          open: () => options.open ?? true,
          now: () => at,
          match: async (tx, events) => {
            // Another connection cannot see them yet: they commit with their matches, or not at all.
            seen.push({ events, visibleOutside: await count(events.map((event) => event.id)) });
            if (options.fail) throw options.fail;
            return () => {
              finished++;
            };
          },
          failed: (error, events) => failures.push([error, events]),
        };
        return { matcher, seen, failures, finished: () => finished };
      };

      it('stores a small batch marked matched, hands its events to the matcher oldest first, and publishes nothing', async () => {
        const { matcher, seen, failures, finished } = recordingMatcher();
        const newer = platformEvent('newer', new Date('2026-11-20T09:00:00Z'));
        const older = platformEvent('older', new Date('2026-11-20T08:00:00Z'), 'asset_dns_changed');
        const publisher = createEventPublisher(ctx({ matchInStore: matcher }));
        expect(await publisher.publish([newer, older])).toEqual({ accepted: 2, duplicates: 0 });
        expect(seen).toHaveLength(1);
        expect(seen[0]!.visibleOutside).toBe(0);
        expect(seen[0]!.events.map((event) => event.id)).toEqual([older.id, newer.id]);
        // What lockUnmatchedEvents would have read of them.
        expect(seen[0]!.events[0]).toMatchObject({ organization_id: org.id, scope: 'asset_dns_changed', asset: 'older.example.com', title: 'New asset', data: { n: 'older' }, tags: [] });
        expect(typeof seen[0]!.events[0]!.received_at).toBe('string');
        expect(finished()).toBe(1);
        expect(failures).toEqual([]);
        expect((await rows([newer.id, older.id])).map((row) => row.matched_at)).toEqual([at, at]);
        expect(await queued('new_asset_added')).not.toContainEqual([org.id, newer.id]);
        expect(await queued('asset_dns_changed')).not.toContainEqual([org.id, older.id]);
        // A repeat is a duplicate, and is not matched again.
        expect(await publisher.publish(newer)).toEqual({ accepted: 0, duplicates: 1 });
        expect(seen).toHaveLength(1);
      });

      it('stores the events alone and publishes them when matching fails: nothing accepted is lost', async () => {
        const failure = new Error('canceling statement due to statement timeout');
        const { matcher, failures, finished } = recordingMatcher({ fail: failure });
        const event = platformEvent('unmatched', new Date());
        expect(await createEventPublisher(ctx({ matchInStore: matcher })).publish(event)).toEqual({ accepted: 1, duplicates: 0 });
        expect(failures).toEqual([[failure, 1]]);
        expect(finished()).toBe(0);
        expect((await rows([event.id])).map((row) => row.matched_at)).toEqual([null]);
        expect(await queued('new_asset_added')).toContainEqual([org.id, event.id]);
      });

      it('leaves a batch over MATCH_IN_STORE_UP_TO, and every batch once closing, to matching in process and the queues', async () => {
        const big = recordingMatcher();
        const events = Array.from({ length: MATCH_IN_STORE_UP_TO + 1 }, (_, i) => platformEvent(`big${i}`, new Date()));
        expect(await createEventPublisher(ctx({ matchInStore: big.matcher })).publish(events)).toEqual({ accepted: events.length, duplicates: 0 });
        const closed = recordingMatcher({ open: false });
        const single = platformEvent('closing', new Date());
        expect(await createEventPublisher(ctx({ matchInStore: closed.matcher })).publish(single)).toEqual({ accepted: 1, duplicates: 0 });
        expect([big.seen, closed.seen]).toEqual([[], []]);
        const queuedNow = await queued('new_asset_added');
        expect(queuedNow).toContainEqual([org.id, events[0]!.id]);
        expect(queuedNow).toContainEqual([org.id, single.id]);
      });

      it('refuses an unknown organization as ever, storing nothing of the call', async () => {
        const { matcher, failures } = recordingMatcher();
        const good = platformEvent('good', new Date());
        const call = createEventPublisher(ctx({ matchInStore: matcher })).publish([good, { ...platformEvent('stranger', new Date()), organizationId: randomUUID() }]);
        await expect(call).rejects.toMatchObject({ parameters: [{ param: 'events[1].organization_id', details: [expect.stringMatching(/^Invalid pk/)] }] });
        expect(failures).toEqual([]);
        expect(await count([good.id])).toBe(0);
      });
    });

    it('does nothing for no events', async () => {
      expect(await ctx().ingest([])).toEqual({ accepted: 0, duplicates: 0 });
    });
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths[INGEST].post;
    expect(post.tags).toEqual(['Ingest']);
    expect(post.security).toEqual([{ ingest: [] }]);
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '413']));
    expect(post.requestBody.content['application/json'].schema.oneOf).toHaveLength(2);
    expect(JSON.stringify(doc)).toContain('organization_id');
  });
});
