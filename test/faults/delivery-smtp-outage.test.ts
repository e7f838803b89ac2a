import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { startRelay, type TcpRelay } from '../support/relay';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { processEnv } from './support/services';
import { report, scale, sendStream, settle, storedEvents, tally } from './support/stream';
import { pause } from '../support/wait';

const EVENTS = scale(300, 3000);
/** How long the server refuses connections: a minute in the long run. */
const OUTAGE_MS = scale(8000, 60_000);
const MAX_PAUSE_MS = scale(2000, 30_000);

/** The same 30% of messages every run: those whose Message-ID hashes low. */
const unlucky = (messageId: string) => createHash('sha256').update(messageId).digest()[0]! < 256 * 0.3;

describe('fault: the SMTP server answers 451 to 30% of messages, then refuses connections, then recovers', () => {
  let relay: TcpRelay;
  let refused451 = 0;
  const s = useScenario({
    events: EVENTS,
    tag: 'smtp',
    smtp: { acceptDelayMs: 2 },
    around: {
      before: async () => {
        s.smtp.setVerdict(({ attempt, messageId }) => {
          if (attempt === 1 && unlucky(messageId)) {
            refused451++;
            return { code: 451, message: '4.3.0 Try again later' };
          }
          return 'accept';
        });
        relay = await startRelay({ host: '127.0.0.1', port: s.smtp.port });
      },
      after: () => relay.close(),
    },
  });

  it('delivers everything once after the server recovers, spending no retries on the outage', async () => {
    const env = processEnv(s.db, { smtpUrl: `smtp://127.0.0.1:${relay.port}` });
    const server = await s.spawn({ ...env, MAIL_OUTAGE_MAX_PAUSE_MS: String(MAX_PAUSE_MS), MAIL_ATTEMPTS: '4' });

    // The outage starts a third into the stream, once e-mails are flowing, and lasts past its end.
    const requests = Math.ceil(EVENTS / 5);
    let outage: Promise<void> | undefined;
    let cutAt = 0;
    let recoveredAt = 0;
    let sentBeforeOutage = 0;
    const stream = await sendStream(() => server.baseUrl!, INGEST_TOKEN, s.setup.events, {
      onRequest: (request) => {
        if (request !== Math.floor(requests / 3)) return;
        outage = (async () => {
          // Cut while mail flows (or, on a crawling machine, after 5 s whatever happened).
          await s.smtp.waitFor(20, 5000).catch(() => {});
          sentBeforeOutage = s.smtp.received.length;
          cutAt = Date.now();
          await relay.cut();
          await pause(OUTAGE_MS);
          await relay.restore();
          recoveredAt = Date.now();
        })();
      },
    });
    await outage;
    // Messages the server accepted just as the cut came (their 250 was lost with the connection)
    // must be sent again, with the same Message-ID. Nothing is accepted after that.
    const acceptedAtCut = s.smtp.received.filter((mail) => mail.receivedAt >= cutAt - 200 && mail.receivedAt < cutAt + 500).length;
    const sentDuringOutage = s.smtp.received.filter((mail) => mail.receivedAt >= cutAt + 500 && mail.receivedAt < recoveredAt).length;

    const stored = await storedEvents(s.db);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    const drainedAt = Math.max(...s.smtp.received.map((mail) => mail.receivedAt));
    const paused = server.lines.filter((line) => line.msg === 'SMTP server unavailable: mail paused').length;
    report('smtp-451-then-refused', {
      ...figures,
      outage_ms: OUTAGE_MS,
      answered_451: refused451,
      sent_before_outage: sentBeforeOutage,
      accepted_as_the_connections_were_cut: acceptedAtCut,
      pauses: paused,
      drained_ms_after_recovery: drainedAt - recoveredAt,
      ingest: stream.outcomes,
    });

    expect(stream.accepted.size).toBe(EVENTS);
    expect(refused451).toBeGreaterThan(0);
    expect(sentBeforeOutage).toBeGreaterThanOrEqual(20);
    expect(sentDuringOutage).toBe(0);
    expectDeliveredOnce(figures, { retransmittedAtMost: acceptedAtCut });
    expect(paused).toBeGreaterThan(0);
    // Mail flows again within a pause of the server's return (plus the work itself).
    expect(drainedAt - recoveredAt).toBeLessThan(MAX_PAUSE_MS + 15_000);
    // With 4 tries per e-mail, an outage that spent tries would have failed some for good.
    const { rows } = await s.db.pool.query<{ status: string; n: number; most: number }>(
      'SELECT status, count(*)::int AS n, max(attempts)::int AS most FROM deliveries GROUP BY status',
    );
    expect(rows.map(({ status, n }) => ({ status, n }))).toEqual([{ status: 'sent', n: figures.emails }]);
    expect(rows[0]!.most).toBeLessThanOrEqual(2);
  }, scale(120_000, 600_000));
});
