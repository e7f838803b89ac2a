import { describe, expect, it, vi } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { processEnv } from './support/services';
import { report, scale, sendStream, settle, storedEvents, tally } from './support/stream';
import { pause } from '../support/wait';

const EVENTS = scale(300, 3000);
const KILLS = scale(1, 3);
const WORKER = { ROLES: 'match,schedule,deliver,send' };

describe('fault: the worker process is killed (SIGKILL) mid-stream, then started again', () => {
  // 10 ms a message: a backlog of e-mails is in flight when the worker dies.
  const s = useScenario({ events: EVENTS, tag: 'kill', smtp: { acceptDelayMs: 10 } });

  it('delivers every accepted event once', async () => {
    const env = processEnv(s.db, { smtpUrl: s.smtp.url });
    const api = await s.spawn({ ...env, ROLES: 'api' });
    let worker = await s.spawn({ ...env, ...WORKER });

    // Kills spread over the stream; each worker is back 500 ms later.
    const requests = Math.ceil(EVENTS / 5);
    const killAt = new Set(Array.from({ length: KILLS }, (_, i) => Math.floor(((i + 1) * requests) / (KILLS + 1))));
    let inFlightAtKills = 0;
    const restarts: Array<Promise<void>> = [];
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, s.setup.events, {
      onRequest: async (request) => {
        if (!killAt.has(request)) return;
        // Killed while sending: the worker has sent since it (re)started, however slowly it started
        // on a loaded machine; the stream waits for that, so the kill still falls mid-stream.
        await Promise.all(restarts);
        const sentBefore = s.smtp.received.length;
        await vi.waitFor(() => expect(s.smtp.received.length).toBeGreaterThan(sentBefore), { timeout: 60_000, interval: 10 });
        const victim = worker;
        restarts.push(
          (async () => {
            await victim.kill();
            // Claimed and not recorded as sent: these may have reached the SMTP server already.
            const { rows } = await s.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'sending'`);
            inFlightAtKills += rows[0]!.n;
            await pause(500);
            worker = await s.spawn({ ...env, ...WORKER });
          })(),
        );
      },
    });
    await Promise.all(restarts);
    const killedAfter = s.smtp.received.length;

    const stored = await storedEvents(s.db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    report('sigkill-worker', { ...figures, kills: KILLS, in_flight_at_kills: inFlightAtKills, ingest: stream.outcomes });

    expect(stream.accepted.size).toBe(EVENTS);
    expect(killedAfter).toBeGreaterThan(0);
    // The one window no mailer can close: killed between the server's 250 and the record. Such an
    // e-mail goes again with the same Message-ID; there can be no more of them than were in flight.
    expectDeliveredOnce(figures, { retransmittedAtMost: inFlightAtKills });
    const { rows } = await s.db.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(rows).toEqual([{ status: 'sent', n: figures.emails }]);
  }, scale(120_000, 600_000));
});
