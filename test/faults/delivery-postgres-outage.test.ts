import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { DATABASE_URL } from '../support/database';
import { startRelay, throughRelay, type TcpRelay } from '../support/relay';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { processEnv } from './support/services';
import { report, scale, sendStream, settle, storedEvents, tally } from './support/stream';
import { pause } from '../support/wait';

const EVENTS = scale(300, 3000);
const DOWN_MS = scale(3000, 30_000);
/** The stream runs about twice as long as the outage: before, during and after it. */
const INTERVAL_MS = Math.round((DOWN_MS * 2) / (EVENTS / 5));

interface Outage {
  /** The database URL the processes use. */
  databaseUrl: string;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * PostgreSQL goes away mid-stream and comes back. Ingest must answer an error while it is away
 * (never a 202 for an event it did not store), and every stored event must be delivered once.
 */
function postgresScenario(name: string, tag: string, makeOutage: () => Promise<Outage>) {
  let outage: Outage;
  const s = useScenario({
    events: EVENTS,
    tag,
    smtp: { acceptDelayMs: 2 },
    around: {
      before: async () => {
        outage = await makeOutage();
      },
      after: () => outage.close(),
    },
  });

  it('answers errors while it is down, never a 202 for an event it did not store, and delivers every stored event once', async () => {
    const env = processEnv(s.db, { smtpUrl: s.smtp.url, databaseUrl: outage.databaseUrl });
    const api = await s.spawn({ ...env, ROLES: 'api' });
    const worker = await s.spawn({ ...env, ROLES: 'match,schedule,deliver,send' });

    const requests = Math.ceil(EVENTS / 5);
    let away: Promise<void> | undefined;
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, s.setup.events, {
      intervalMs: INTERVAL_MS,
      onRequest: (request) => {
        if (request !== Math.floor(requests / 3)) return;
        away = (async () => {
          await outage.down();
          await pause(DOWN_MS);
          await outage.up();
        })();
      },
    });
    await away;

    const stored = await storedEvents(s.db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    report(name, {
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
    expectDeliveredOnce(figures);
    expect(api.child.exitCode, api.stderr()).toBeNull();
    expect(worker.child.exitCode, worker.stderr()).toBeNull();
    // And once it is back, ingest takes events again.
    const after = await sendStream(() => api.baseUrl!, INGEST_TOKEN, [{ ...s.setup.events[0]!, id: `${tag}-after` }]);
    expect(after.outcomes).toEqual({ 202: 1 });
  }, scale(120_000, 600_000));
}

/**
 * As the processes see a restart: every connection reset, new ones refused, then answers again.
 * Every other test file shares the real server, so in `npm test` it goes away behind a relay.
 */
describe('fault: PostgreSQL goes away mid-stream (connections cut) and comes back', () => {
  postgresScenario('postgres-outage', 'pg', async () => {
    const target = new URL(DATABASE_URL);
    const relay: TcpRelay = await startRelay({ host: target.hostname, port: Number(target.port || 5432) });
    return { databaseUrl: throughRelay(DATABASE_URL, relay), down: () => relay.cut(), up: () => relay.restore(), close: () => relay.close() };
  });
});

/**
 * The real server stopped and started (pg_ctlcluster): only in `npm run test:faults`, which runs
 * its files one at a time, since it breaks whatever else uses PostgreSQL meanwhile.
 */
describe.runIf(process.env.FAULTS_RESTART_POSTGRES === '1')('fault: PostgreSQL itself restarts mid-stream', () => {
  postgresScenario('postgres-restart', 'pgrestart', async () => {
    const run = promisify(execFile);
    const cluster = ['--skip-systemctl-redirect', readdirSync('/etc/postgresql')[0]!, 'main'];
    const ready = () => vi.waitFor(() => run('pg_isready', ['-h', '127.0.0.1', '-q']), { timeout: 10_000, interval: 100 });
    return {
      databaseUrl: DATABASE_URL,
      down: async () => {
        await run('pg_ctlcluster', [...cluster, 'stop', '--mode', 'fast']);
      },
      up: async () => {
        await run('pg_ctlcluster', [...cluster, 'start']);
        await ready();
      },
      close: async () => {
        await run('pg_ctlcluster', [...cluster, 'start']).catch(() => {});
        await ready();
      },
    };
  });
});
