import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/processes';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import { processEnv, startPrivateRedis, type PrivateRedis } from './support/services';
import { prepareStream, report, scale, sendStream, settle, sleep, storedEvents, tally, type StreamSetup } from './support/stream';

const EVENTS = scale(300, 3000);
const DOWN_MS = scale(1000, 10_000);

describe('fault: Redis restarts without persistence mid-stream', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: PrivateRedis;
  let setup: StreamSetup;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer({ acceptDelayMs: 5 });
    db = await createTestDatabase();
    redis = await startPrivateRedis();
    setup = await prepareStream(db, { events: EVENTS, tag: 'redis' });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await redis.kill();
    await db.drop();
    await smtp.close();
  });

  it('loses nothing: the reconciler rebuilds the queues from PostgreSQL', async () => {
    const env = processEnv(db, { smtpUrl: smtp.url, redisUrl: redis.url });
    const api = await spawnServer({ ...env, ROLES: 'api' });
    const worker = await spawnServer({ ...env, ROLES: 'matcher,scheduler,mailer' });
    processes.push(api, worker);

    const requests = Math.ceil(EVENTS / 5);
    let restart: Promise<void> | undefined;
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, setup.events, {
      onRequest: (request) => {
        if (request !== Math.floor(requests / 2)) return;
        restart = (async () => {
          await redis.kill();
          await sleep(DOWN_MS);
          await redis.start();
        })();
      },
    });
    await restart;

    const stored = await storedEvents(db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(() => tally(setup, stored, smtp.received), scale(60_000, 180_000));
    const rebuilt = [...api.lines, ...worker.lines].filter((line) => line.msg === 'reconciler re-requested lost work');
    report('redis-restart', { ...figures, redis_down_ms: DOWN_MS, not_accepted: EVENTS - stream.accepted.size, ingest: stream.outcomes, reconciler_runs_that_rebuilt: rebuilt.length });

    expect(figures.missing).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.retransmitted).toBe(0);
    expect(figures.unexpected).toBe(0);
    // Both processes lived through it.
    expect(api.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    const { rows } = await db.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(rows).toEqual([{ status: 'sent', n: figures.emails }]);
  }, scale(120_000, 600_000));
});
