import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/processes';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import { processEnv } from './support/services';
import { prepareStream, report, scale, sendStream, settle, sleep, storedEvents, tally, type StreamSetup } from './support/stream';

const EVENTS = scale(300, 3000);
const KILLS = scale(1, 3);

describe('fault: the worker process is killed (SIGKILL) mid-stream, then started again', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let setup: StreamSetup;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    // 10 ms a message: a backlog of e-mails is in flight when the worker dies.
    smtp = await startSmtpServer({ acceptDelayMs: 10 });
    db = await createTestDatabase();
    setup = await prepareStream(db, { events: EVENTS, tag: 'kill' });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await db.drop();
    await smtp.close();
  });

  it('delivers every accepted event once', async () => {
    const env = processEnv(db, { smtpUrl: smtp.url });
    const api = await spawnServer({ ...env, ROLES: 'api' });
    let worker = await spawnServer({ ...env, ROLES: 'matcher,scheduler,mailer' });
    processes.push(api, worker);

    // Kills spread over the stream, each once e-mails are flowing; each worker is back 500 ms later.
    const requests = Math.ceil(EVENTS / 5);
    const killAt = new Set(Array.from({ length: KILLS }, (_, i) => Math.floor(((i + 1) * requests) / (KILLS + 1))));
    let inFlightAtKills = 0;
    const restarts: Array<Promise<void>> = [];
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, setup.events, {
      onRequest: (request) => {
        if (!killAt.has(request)) return;
        const victim = worker;
        restarts.push(
          (async () => {
            await victim.kill();
            // Claimed and not recorded as sent: these may have reached the SMTP server already.
            const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'sending'`);
            inFlightAtKills += rows[0]!.n;
            await sleep(500);
            worker = await spawnServer({ ...env, ROLES: 'matcher,scheduler,mailer' });
            processes.push(worker);
          })(),
        );
      },
    });
    await Promise.all(restarts);
    const killedAfter = smtp.received.length;

    const stored = await storedEvents(db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(() => tally(setup, stored, smtp.received), scale(60_000, 180_000));
    report('sigkill-worker', { ...figures, kills: KILLS, in_flight_at_kills: inFlightAtKills, ingest: stream.outcomes });

    expect(stream.accepted.size).toBe(EVENTS);
    expect(killedAfter).toBeGreaterThan(0);
    expect(figures.missing).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.unexpected).toBe(0);
    // The one window no mailer can close: killed between the server's 250 and the record. Such an
    // e-mail goes again with the same Message-ID; there can be no more of them than were in flight.
    expect(figures.retransmitted).toBeLessThanOrEqual(inFlightAtKills);
    const { rows } = await db.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(rows).toEqual([{ status: 'sent', n: figures.emails }]);
  }, scale(120_000, 600_000));
});
