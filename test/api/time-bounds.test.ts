/**
 * Time bounds (issue 15, item 6): the API's statements are cancelled past API_STATEMENT_TIMEOUT_MS
 * and answer the catalog's 503 (not a 500, not a hang); a request that arrives too slowly (a body
 * sent a byte at a time) is cut after HTTP_REQUEST_TIMEOUT_MS with a 408.
 */
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSmtpServer } from '@notify/mail/testing';
import { INGEST_TOKEN, startTestApp, type TestApp } from '../support/app';
import { startPipeline, type PipelineHarness } from '../support/pipeline';

const DOCS = 'https://docs.example.test/notification-rules';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `work`, or a failure once `ms` have passed: a statement without a bound would wait behind the lock forever. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('statement timeout of the API (API_STATEMENT_TIMEOUT_MS)', () => {
  let p: PipelineHarness;
  let key: string;

  beforeAll(async () => {
    // The real process wiring (apps/server), API role only: no mail goes anywhere.
    p = await startPipeline({ url: 'smtp://127.0.0.1:9' } as TestSmtpServer, { ROLES: 'api', API_STATEMENT_TIMEOUT_MS: '300', DOCS_URL: DOCS });
    const org = await p.admin('POST', '/admin/v1/organizations', { name: 'Slow', plan: { groups: ['platform', 'easm'], rate_limit_per_second: 1000 } });
    const created = await p.admin('POST', `/admin/v1/organizations/${org.json().id}/api-keys`, { name: 'k' });
    key = created.json().key;
  });
  afterAll(async () => {
    await p?.stop();
  });

  /** Holds an exclusive lock on `table` (from a connection without a bound) while `work` runs. */
  async function behindLock<T>(table: string, work: () => Promise<T>): Promise<T> {
    const client = await p.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await work();
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  it('the API connections carry the bound; a raw-SQL asset search over it answers the catalog 503', async () => {
    const { rows } = await p.process.deps.db.pool.query('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe('300ms');
    const started = Date.now();
    const response = await behindLock('assets', () => within(5000, p.api(key, 'POST', '/v1/easm/assets/search', { filters: { must: [{ name: 'asset', type: 'wildcard', value: '*.example.com' }] } })));
    const elapsed = Date.now() - started;
    expect(response.statusCode, response.body).toBe(503);
    expect(response.json()).toEqual({ code: 10503, details: expect.stringMatching(/took too long/), parameters: [], solution: DOCS });
    expect(elapsed).toBeLessThan(3000);
    console.info(`time-bounds: asset search behind a lock answered 503 after ${elapsed} ms (API_STATEMENT_TIMEOUT_MS=300)`);
    // The bound is per statement: the same search without the lock answers.
    expect((await p.api(key, 'POST', '/v1/easm/assets/search', {})).statusCode).toBe(200);
  });

  it('a Prisma query over the bound answers the same 503', async () => {
    const response = await behindLock('notification_rules', () => within(5000, p.api(key, 'GET', '/v1/platform/notification-rules')));
    expect(response.statusCode, response.body).toBe(503);
    expect(response.json()).toMatchObject({ code: 10503, details: expect.stringMatching(/took too long/) });
  });
});

describe('request timeout (HTTP_REQUEST_TIMEOUT_MS) on a real socket', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ HTTP_REQUEST_TIMEOUT_MS: '1000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Sends `head` and then `body` one byte every `everyMs`; resolves with what came back and when the socket closed. */
  function trickle(head: string, body: string, everyMs: number, giveUpMs: number): Promise<{ answer: string; closedAfterMs: number | null }> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const started = Date.now();
      let answer = '';
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (closed: boolean) => {
        clearInterval(timer);
        clearTimeout(giveUp);
        socket.destroy();
        resolve({ answer, closedAfterMs: closed ? Date.now() - started : null });
      };
      const giveUp = setTimeout(() => finish(false), giveUpMs);
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('close', () => finish(true));
      socket.on('error', () => {});
      socket.on('connect', () => {
        const bytes = head + body;
        // The head goes at once when it is not what trickles.
        if (body !== '') {
          socket.write(head);
          sent = head.length;
        }
        timer = setInterval(() => {
          if (sent < bytes.length && socket.writable) socket.write(bytes[sent++]!);
        }, everyMs);
      });
    });
  }

  it('cuts a body sent a byte every 100 ms after about a second, with the catalog 408', async () => {
    const body = JSON.stringify({ events: [] }).padEnd(200, ' ');
    const head = `POST /v1/ingest/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${INGEST_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { answer, closedAfterMs } = await trickle(head, body, 100, 6000);
    expect(closedAfterMs, 'the connection was still open after 6 s').not.toBeNull();
    expect(closedAfterMs!).toBeLessThan(4000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 10408 });
    console.info(`time-bounds: a body trickled at 10 bytes/s was cut after ${closedAfterMs} ms (HTTP_REQUEST_TIMEOUT_MS=1000)`);
  });

  it('cuts headers sent a byte every 100 ms too', async () => {
    const head = `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(200)}\r\n\r\n`;
    const { closedAfterMs } = await trickle(head, '', 100, 6000);
    expect(closedAfterMs, 'the connection was still open after 6 s').not.toBeNull();
    expect(closedAfterMs!).toBeLessThan(4000);
  });

  it('an ordinary request on the same server is answered', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect(response.status).toBe(200);
    await sleep(0);
  });
});
