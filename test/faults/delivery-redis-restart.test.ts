import { describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { processEnv, startPrivateRedis, type PrivateRedis } from './support/services';
import { report, scale, sendStream, settle, storedEvents, tally } from './support/stream';
import { pause } from '../support/wait';

const EVENTS = scale(300, 3000);
const DOWN_MS = scale(1000, 10_000);

describe('fault: Redis restarts without persistence mid-stream', () => {
  let redis: PrivateRedis;
  const s = useScenario({
    events: EVENTS,
    tag: 'redis',
    smtp: { acceptDelayMs: 5 },
    around: {
      before: async () => {
        redis = await startPrivateRedis();
      },
      after: () => redis.kill(),
    },
  });

  it('loses nothing: the reconciler rebuilds the queues from PostgreSQL', async () => {
    const env = processEnv(s.db, { smtpUrl: s.smtp.url, redisUrl: redis.url });
    const api = await s.spawn({ ...env, ROLES: 'api' });
    const worker = await s.spawn({ ...env, ROLES: 'match,schedule,deliver,send' });

    const requests = Math.ceil(EVENTS / 5);
    let restart: Promise<void> | undefined;
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, s.setup.events, {
      onRequest: (request) => {
        if (request !== Math.floor(requests / 2)) return;
        restart = (async () => {
          await redis.kill();
          await pause(DOWN_MS);
          await redis.start();
        })();
      },
    });
    await restart;

    const stored = await storedEvents(s.db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    const rebuilt = [...api.lines, ...worker.lines].filter((line) => line.msg === 'reconciler re-requested lost work');
    report('redis-restart', { ...figures, redis_down_ms: DOWN_MS, not_accepted: EVENTS - stream.accepted.size, ingest: stream.outcomes, reconciler_runs_that_rebuilt: rebuilt.length });

    expectDeliveredOnce(figures);
    // Both processes lived through it.
    expect(api.child.exitCode, api.stderr()).toBeNull();
    expect(worker.child.exitCode, worker.stderr()).toBeNull();
    const { rows } = await s.db.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
    expect(rows).toEqual([{ status: 'sent', n: figures.emails }]);
  }, scale(120_000, 600_000));
});
