/**
 * Secrets stay secret: API keys are stored only as hashes (every column of every table of the
 * schema is searched for the plaintext, and every Redis key and value under the prefix), and no
 * key or token reaches a log line at level trace, wherever a client puts it: the apikey header,
 * a bearer, a credential-named query parameter, a cookie, a JSON or form body, a body that is not JSON.
 */
import { connect, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN, INGEST_TOKEN } from '../support/app';
import { REDIS_URL } from '../support/database';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';

const METRICS_TOKEN = 'test-metrics-token-secret-5150-abcdef';
const RULES = '/v1/platform/notification-rules';

/** Writes `head` to a fresh connection and returns whatever comes back before the server closes it. */
function rawHttp(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(error)));
  });
}

describe('secrets: stored as hashes, never logged (faults)', () => {
  const raw: string[] = [];
  const rawAnswers: string[] = [];
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  const keys: string[] = [];
  const secrets: string[] = [ADMIN_TOKEN, INGEST_TOKEN, METRICS_TOKEN];
  let requests = 0;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    p = await startPipeline(smtp, { LOG_LEVEL: 'trace', METRICS_TOKEN }, { logDestination: { write: (line: string) => void raw.push(line) } });
    const org = await p.createOrg({ memberCount: 1 });
    keys.push(org.key);
    // More keys through the operator API: a second, one made default, one renamed, one deleted.
    for (const name of ['second', 'third', 'deleted']) {
      const created = await p.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name });
      expect(created.statusCode).toBe(201);
      keys.push(created.json().key);
      if (name === 'third') expect((await p.admin('PATCH', `/admin/v1/organizations/${org.id}/api-keys/${created.json().id}`, { is_default: true, name: 'renamed' })).statusCode).toBe(200);
      if (name === 'deleted') expect((await p.admin('DELETE', `/admin/v1/organizations/${org.id}/api-keys/${created.json().id}`)).statusCode).toBe(204);
    }
    secrets.push(...keys);
    const [key] = keys as [string];
    const unknownKey = 'Zz'.repeat(16);
    secrets.push(unknownKey);
    const app = p.process.app!;
    const send = (method: string, url: string, headers: Record<string, string> = {}, payload?: string | object): Promise<LightMyRequestResponse> => {
      requests++;
      return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
    };
    const member = org.members[0]!.team_member_uuid;

    // Every place a client might put a key or token, on good and bad requests alike.
    for (const secret of [key, unknownKey, ADMIN_TOKEN, INGEST_TOKEN, METRICS_TOKEN]) {
      await send('GET', RULES, { apikey: secret });
      await send('GET', RULES, { authorization: `Bearer ${secret}` });
      await send('GET', RULES, { authorization: secret });
      await send('GET', RULES, { authorization: `Basic ${Buffer.from(`user:${secret}`).toString('base64')}` });
      // Query parameters that name a credential (the path and ordinary filters are not a place for one).
      await send('GET', `${RULES}?page=1&apikey=${secret}&token=${secret}&access_token=${secret}&key=${secret}&api_key=${encodeURIComponent(secret)}&API-KEY=${secret}&name__contains=x`, { apikey: key });
      await send('GET', `${RULES}?apikey=${secret}`);
      await send('GET', `${RULES}?ordering=name&apikey=${secret}&apikey=${secret}`, { apikey: key });
      await send('GET', `/v1/nowhere?apikey=${secret}`);
      await send('GET', `/admin/v1/organizations?token=${secret}&password=${secret}&session=${secret}`, { authorization: `Bearer ${secret}` });
      await send('GET', `/v1/lookup/whois?domain=example.com&apikey=${secret}`);
      await send('GET', `/admin/login?next=%2Fadmin%2Fconsole&auth=${secret}`);
      await send('GET', '/metrics', { authorization: `Bearer ${secret}` });
      await send('GET', '/admin/console', { cookie: `notify_admin_session=${secret}; apikey=${secret}` });
      await send('POST', '/v1/ingest/events', { authorization: `Bearer ${secret}` }, makeEvent(org.id, { title: 'x' }));
      // In bodies: fields named like secrets, a secret as an ordinary value, a body that is not JSON.
      await send('POST', RULES, { apikey: key, 'content-type': 'application/json' }, { name: secret, scope: 'nope', members: [secret], apikey: secret, key: secret, token: secret });
      await send('POST', RULES, { apikey: key, 'content-type': 'application/json' }, `{"apikey": "${secret}", "name": "${secret}",`);
      await send('POST', RULES, { apikey: key, 'content-type': 'text/plain' }, `apikey=${secret}`);
      await send('POST', '/admin/login', { 'content-type': 'application/x-www-form-urlencoded' }, `token=${secret}&next=/admin/console?apikey=${secret}`);
      await send('POST', '/admin/v1/organizations', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, { name: secret, timezone: secret, plan: { groups: [secret] } });
      await send('POST', `/admin/v1/organizations/${org.id}/members`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { email: `${secret}@x`, name: 'x' });
      await send('POST', '/v1/ingest/events', { authorization: `Bearer ${INGEST_TOKEN}` }, { ...makeEvent(org.id), scope: secret, title: secret, url: `https://x.example.com/?apikey=${secret}` });
    }
    // Requests Node's HTTP parser refuses before any route (headers over 16 KiB, a malformed request),
    // carrying a key and a token, over a real socket.
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    for (const head of [
      `GET ${RULES} HTTP/1.1\r\nHost: x\r\napikey: ${key}\r\nauthorization: Bearer ${ADMIN_TOKEN}\r\nx-padding: ${'p'.repeat(20_000)}\r\n\r\n`,
      `GET ${RULES}?apikey=${key}&pad=${'p'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET ${RULES} HTTP/1.1\r\nHost: x\r\napikey: ${key}\r\nauthorization: Bearer ${INGEST_TOKEN}\r\nbroken header line\r\n\r\n`,
    ]) {
      requests++;
      rawAnswers.push(await rawHttp(port, head));
    }
    // And a request that goes all the way: a rule, an event, an e-mail (the workers log at trace too).
    await p.createRule(key, { name: 'Secrets', scope: 'new_open_port_detected', members: [member] });
    expect((await p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await smtp.waitFor(1);
    // Its log line follows the SMTP accept (beforeAll cannot use expect.poll).
    await vi.waitFor(() => expect(raw.some((line) => line.includes('"e-mail sent"'))).toBe(true), { timeout: 5000, interval: 20 }).catch(() => {});
  });
  afterAll(async () => {
    await p.stop();
    await smtp.close();
    console.info(`abuse-secrets: ${requests} requests, ${raw.length} log lines, ${secrets.length} secrets`);
  });

  it('logs at trace level, about every request (the check below reads real lines)', () => {
    expect(raw.length).toBeGreaterThan(requests);
    expect(raw.some((line) => line.includes('"incoming request"'))).toBe(true);
    expect(raw.some((line) => line.includes('"e-mail sent"'))).toBe(true);
    // URLs are still logged, with only the credentials' values masked.
    expect(raw.some((line) => line.includes('"url":"/v1/platform/notification-rules?page=1&apikey=[redacted]&token=[redacted]'))).toBe(true);
    expect(raw.some((line) => line.includes('&name__contains=x"'))).toBe(true);
  });

  it('writes no key or token to any log line, in any encoding', () => {
    const text = raw.join('');
    for (const secret of secrets) {
      for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
        const line = raw.find((l) => l.includes(form));
        expect(line, `a log line holds ${secret.slice(0, 6)}…: ${line?.slice(0, 400)}`).toBeUndefined();
      }
    }
    expect(text.length).toBeGreaterThan(0);
  });

  it('answers what the HTTP parser refuses with a body of decisions §1 and a service-request-id', () => {
    expect(rawAnswers).toHaveLength(3);
    for (const answer of rawAnswers) {
      const [head, body] = answer.split('\r\n\r\n');
      expect(head, answer.slice(0, 300)).toMatch(/^HTTP\/1\.1 (431|400) /);
      expect(head).toMatch(/\r\nservice-request-id: [0-9a-f-]{36}\r\n/i);
      expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      const parsed = JSON.parse(body!);
      expect(Object.keys(parsed).sort()).toEqual(['code', 'details', 'parameters', 'solution']);
      expect(parsed.code).toBe(10000 + Number(head!.slice(9, 12)));
    }
  });

  it('stores no plaintext key or token in any column of any table', async () => {
    const { rows: columns } = await p.db.pool.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns c
        WHERE table_schema = $1 AND EXISTS (SELECT 1 FROM information_schema.tables t WHERE t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE')`,
      [p.db.schema],
    );
    const tables = new Set(columns.map((c) => c.table_name));
    expect(tables).toEqual(expect.objectContaining({ size: expect.any(Number) }));
    for (const expected of ['api_keys', 'organizations', 'team_members', 'notification_rules', 'events', 'deliveries']) expect(tables.has(expected), expected).toBe(true);
    let cells = 0;
    for (const { table_name: table, column_name: column } of columns) {
      const quoted = `"${table.replace(/"/g, '""')}"."${column.replace(/"/g, '""')}"`;
      const { rows } = await p.db.pool.query<{ n: string; hits: string }>(
        `SELECT count(*) AS n, count(*) FILTER (WHERE position(needle IN ${quoted}::text) > 0) AS hits
           FROM "${table.replace(/"/g, '""')}", unnest($1::text[]) AS needle`,
        [secrets],
      );
      cells += Number(rows[0]!.n);
      expect(Number(rows[0]!.hits), `${table}.${column} holds a secret`).toBe(0);
    }
    expect(cells).toBeGreaterThan(0);
    // The hashes are there instead, one per live key.
    const { rows } = await p.db.pool.query<{ key_hash: string }>('SELECT key_hash FROM api_keys');
    expect(rows).toHaveLength(keys.length - 1);
    for (const row of rows) expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps no plaintext key or token in Redis (queues, counters, caches)', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      let cursor = '0';
      let seen = 0;
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${p.queuePrefix}*`, 'COUNT', 500);
        cursor = next;
        for (const name of found) {
          seen++;
          const type = await redis.type(name);
          const values: string[] =
            type === 'string' ? [(await redis.get(name)) ?? '']
            : type === 'hash' ? Object.entries(await redis.hgetall(name)).flat()
            : type === 'list' ? await redis.lrange(name, 0, -1)
            : type === 'set' ? await redis.smembers(name)
            : type === 'zset' ? await redis.zrange(name, '0', '-1')
            : type === 'stream' ? (await redis.xrange(name, '-', '+')).flat(3).map(String)
            : [];
          const text = [name, ...values].join('\n');
          for (const secret of secrets) expect(text.includes(secret), `redis ${name} (${type}) holds ${secret.slice(0, 6)}…`).toBe(false);
        }
      } while (cursor !== '0');
      expect(seen).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
