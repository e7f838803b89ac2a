import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, INGEST_TOKEN } from '../../support/app';
import { DATABASE_URL, REDIS_URL, type createTestDatabase } from '../../support/database';
import { freePort } from '../../support/ports';
import { vi } from 'vitest';

/**
 * A Redis server of the scenario's own (the shared one serves every other test file), without
 * persistence like ours: `kill()` is SIGKILL, and `start()` brings it back empty on the same port.
 */
export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', ''], {
        stdio: 'ignore',
      });
      const accepts = () =>
        new Promise<void>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.end();
            resolve();
          });
          socket.on('error', reject);
        });
      await vi.waitFor(accepts, { timeout: 10_000, interval: 50 }).catch((error: unknown) => {
        throw new Error('redis-server did not start', { cause: error });
      });
    },
    async kill() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
  await redis.start();
  return redis;
}

/** The environment of a scenario's processes: its schema and queues, fast timers, JSON logs. */
export function processEnv(db: Awaited<ReturnType<typeof createTestDatabase>>, options: { smtpUrl: string; redisUrl?: string; databaseUrl?: string; queuePrefix?: string }): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl ?? DATABASE_URL,
    DATABASE_SCHEMA: db.schema,
    REDIS_URL: options.redisUrl ?? REDIS_URL,
    QUEUE_PREFIX: options.queuePrefix ?? `faults-${randomBytes(4).toString('hex')}`,
    SMTP_URL: options.smtpUrl,
    MAIL_FROM: 'Security Alerts <alerts@notify.test>',
    ADMIN_TOKEN,
    INGEST_TOKEN,
    LOG_LEVEL: 'info',
    INSTANT_COALESCE_MS: '500',
    SCHEDULER_TICK_MS: '200',
    RECONCILE_INTERVAL_MS: '500',
    RECONCILE_GRACE_MS: '2000',
    JOB_LOCK_MS: '4000',
    MAIL_BACKOFF_MS: '200',
    MAIL_ATTEMPTS: '10',
    MAIL_OUTAGE_MAX_PAUSE_MS: '2000',
  };
}
