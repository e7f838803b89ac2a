import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { createTestDatabase, DATABASE_URL } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/processes';
import { startRelay, throughRelay, type TcpRelay } from '../support/relay';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import { processEnv } from './support/services';
import { prepareStream, report, scale, sendStream, settle, sleep, storedEvents, tally, type StreamSetup } from './support/stream';

const EVENTS = scale(300, 3000);
const DOWN_MS = scale(3000, 30_000);
/** The stream runs about twice as long as the outage: before, during and after it. */
const INTERVAL_MS = Math.round((DOWN_MS * 2) / (EVENTS / 5));

/**
 * PostgreSQL going away and coming back, as the processes see a restart: every connection is
 * reset, new ones are refused, then it answers again. Other test files share the real server, so
 * here it goes away behind a relay; `npm run test:faults` also restarts the real one
 * (delivery-postgres-restart.test.ts).
 */
describe('fault: PostgreSQL goes away mid-stream and comes back', () => {
  let smtp: TestSmtpServer;
  let relay: TcpRelay;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let setup: StreamSetup;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer({ acceptDelayMs: 2 });
    const target = new URL(DATABASE_URL);
    relay = await startRelay({ host: target.hostname, port: Number(target.port || 5432) });
    db = await createTestDatabase();
    setup = await prepareStream(db, { events: EVENTS, tag: 'pg' });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await relay.close();
    await db.drop();
    await smtp.close();
  });

  it('answers errors while it is down, never a 202 for an event it did not store, and delivers every stored event once', async () => {
    const env = processEnv(db, { smtpUrl: smtp.url, databaseUrl: throughRelay(DATABASE_URL, relay) });
    const api = await spawnServer({ ...env, ROLES: 'api' });
    const worker = await spawnServer({ ...env, ROLES: 'matcher,scheduler,mailer' });
    processes.push(api, worker);

    const requests = Math.ceil(EVENTS / 5);
    let outage: Promise<void> | undefined;
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, setup.events, {
      intervalMs: INTERVAL_MS,
      onRequest: (request) => {
        if (request !== Math.floor(requests / 3)) return;
        outage = (async () => {
          await relay.cut();
          await sleep(DOWN_MS);
          await relay.restore();
        })();
      },
    });
    await outage;

    const stored = await storedEvents(db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(() => tally(setup, stored, smtp.received), scale(60_000, 180_000));
    report('postgres-outage', {
      ...figures,
      down_ms: DOWN_MS,
      sent: EVENTS,
      accepted: stream.accepted.size,
      stored_not_accepted: [...stored.keys()].filter((id) => !stream.accepted.has(id)).length,
      ingest: stream.outcomes,
    });

    // While it was down, ingest said so (503), and took nothing it could not keep.
    expect(stream.outcomes['503']).toBeGreaterThan(0);
    expect(Object.keys(stream.outcomes).every((status) => status === '202' || status === '503'), JSON.stringify(stream.outcomes)).toBe(true);
    expect(figures.missing).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.retransmitted).toBe(0);
    expect(figures.unexpected).toBe(0);
    expect(api.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    // And once it is back, ingest takes events again.
    const after = await sendStream(() => api.baseUrl!, INGEST_TOKEN, [{ ...setup.events[0]!, id: 'pg-after' }]);
    expect(after.outcomes).toEqual({ 202: 1 });
  }, scale(120_000, 600_000));
});
