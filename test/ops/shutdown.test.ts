import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN, INGEST_TOKEN, startTestApp, type TestOrg } from '../support/app';
import { createTestDatabase, DATABASE_URL, REDIS_URL } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/processes';
import { pause, waitUntilSettled } from '../support/wait';

const EVENTS = 200;
const PER_REQUEST = 10;

describe('SIGTERM during a burst of deliveries', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let org: TestOrg;
  const servers: ServerProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    // A busy SMTP server: 80 ms for each message.
    smtp = await startSmtpServer({ acceptDelayMs: 80 });
    db = await createTestDatabase();
    // One organization, one member per rule, one rule per asset: each event is one e-mail to its own member.
    const t = await startTestApp({}, { db });
    try {
      org = await t.createOrg({ memberCount: EVENTS });
      for (let i = 0; i < EVENTS; i++) {
        const response = await t.api(org.key, 'POST', '/v1/platform/notification-rules', {
          name: `host ${i}`,
          scope: 'new_open_port_detected',
          strategy: { must: [{ name: 'asset', type: 'eq', value: `host-${i}.example.com` }] },
          members: [org.members[i]!.team_member_uuid],
        });
        if (response.statusCode !== 201) throw new Error(response.body);
      }
    } finally {
      await t.close();
    }
    env = {
      DATABASE_URL,
      DATABASE_SCHEMA: db.schema,
      REDIS_URL,
      QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Security Alerts <alerts@notify.test>',
      ADMIN_TOKEN,
      INGEST_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      // Two e-mails in flight, so two send jobs held: when the stop comes, most of the burst waits in
      // the queue for the next process, however fast this machine sends (at 10, the first process
      // could hold, and finish, everything it had stored).
      MAIL_CONCURRENCY: '2',
      RECONCILE_INTERVAL_MS: '500',
      RECONCILE_GRACE_MS: '2000',
      SCHEDULER_TICK_MS: '200',
    };
  });
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await db.drop();
    await smtp.close();
  });

  it('exits 0 within 10 s, and the next process sends every accepted event exactly once', async () => {
    const first = await spawnServer(env);
    servers.push(first);
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      id: `burst-${i}`,
      organization_id: org.id,
      scope: 'new_open_port_detected',
      occurred_at: new Date().toISOString(),
      asset: `host-${i}.example.com`,
      title: `Port 3389 open on host-${i}.example.com`,
    }));
    const accepted = new Set<string>();
    const outcomes: string[] = [];
    const send = async (batch: typeof events) => {
      try {
        const response = await fetch(`${first.baseUrl!}/v1/ingest/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events: batch }),
        });
        outcomes.push(String(response.status));
        if (response.status === 202) for (const event of batch) accepted.add(event.id);
      } catch (error) {
        outcomes.push(((error as Error).cause as { code?: string } | undefined)?.code ?? 'error');
      }
    };

    // The burst: a request every 20 ms; SIGTERM once half of it is in and e-mails are going out.
    const requests: Array<Promise<void>> = [];
    let terminatedAt = 0;
    for (let i = 0; i < EVENTS / PER_REQUEST; i++) {
      requests.push(send(events.slice(i * PER_REQUEST, (i + 1) * PER_REQUEST)));
      if (i === EVENTS / PER_REQUEST / 2) {
        // Mid-burst with e-mails going out (or, on a crawling machine, after 10 s whatever happened).
        await smtp.waitFor(3, 10_000).catch(() => {});
        terminatedAt = Date.now();
        first.child.kill('SIGTERM');
      }
      await pause(20);
    }
    const code = await first.exited;
    const stoppedIn = Date.now() - terminatedAt;
    await Promise.all(requests);
    expect(code, JSON.stringify(first.lines.slice(-5))).toBe(0);
    expect(stoppedIn).toBeLessThan(10_000);
    expect(first.lines.some((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM')).toBe(true);
    expect(first.lines.at(-1)!.msg).toBe('stopped');
    const sentByFirst = smtp.received.length;

    // What counts is what was stored: every 202 is, and anything stored must go out.
    const { rows } = await db.pool.query<{ id: string; asset: string }>('SELECT id, asset FROM events');
    const stored = new Set(rows.map((row) => row.id));
    for (const id of accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    expect(accepted.size).toBeGreaterThanOrEqual(EVENTS / 2);
    // The stop was mid-burst: work was left for the next process.
    expect(sentByFirst).toBeLessThan(stored.size);

    const second = await spawnServer(env);
    servers.push(second);
    const recipientOf = (asset: string) => org.members[Number(/host-(\d+)\./.exec(asset)![1])]!.email;
    const expected = new Set(rows.map((row) => recipientOf(row.asset)));
    // Once nothing is left to send, every e-mail, and any duplicate, has arrived.
    await waitUntilSettled(db, 15_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const byRecipient = new Map<string, number>();
    for (const mail of smtp.received) for (const to of mail.to) byRecipient.set(to, (byRecipient.get(to) ?? 0) + 1);
    const missing = [...expected].filter((email) => !byRecipient.has(email));
    const duplicated = [...byRecipient].filter(([, count]) => count > 1);
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
    expect([...byRecipient.keys()].every((email) => expected.has(email))).toBe(true);
    expect(new Set(smtp.received.map((mail) => mail.messageId)).size).toBe(smtp.received.length);
    expect(smtp.received.length).toBe(stored.size);
    expect(smtp.received.length).toBeGreaterThan(sentByFirst);
    const { rows: deliveries } = await db.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(deliveries).toEqual([{ status: 'sent', n: stored.size }]);
  }, 60_000);
});
