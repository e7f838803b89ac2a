import { loadConfig, type Config } from '@notify/config';
import { createDatabase, migrate } from '@notify/db';
import { buildApp, closeDeps, createDeps, type AppDeps } from '@notify/api';
import { createRedis, subscribeToKeyInvalidations } from '@notify/queues';
import type { MailTransport } from '@notify/mail';
import { createLogger, type DestinationStream } from '@notify/observability';
import { startWorkerRoles, type WorkerRuntime } from '@notify/worker';
import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';

export interface RunningProcess {
  config: Config;
  deps: AppDeps;
  runtime: WorkerRuntime;
  app: FastifyInstance | undefined;
  /**
   * Stops taking work (HTTP first, then jobs and periodic tasks), lets what is in flight finish
   * until `timeoutMs` (default STOP_TIMEOUT_MS) has passed, closes pools.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/** What a stop gives jobs in flight; main.ts exits at 10 s whatever happens, so pools get the rest. */
export const STOP_TIMEOUT_MS = 8000;

function atDeadline(deadline: number): Promise<'late'> {
  return new Promise((resolve) => setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now())).unref());
}

/**
 * One process of the service: migrations, then the roles the configuration
 * names (`ROLES`: api, match, schedule, deliver, send; all by default).
 */
export async function startProcess(
  options: { env?: NodeJS.ProcessEnv; listen?: boolean; transport?: MailTransport; now?: () => Date; logDestination?: DestinationStream } = {},
): Promise<RunningProcess> {
  const config = loadConfig(options.env ?? process.env);
  // V8 allocates an allocation site's objects straight into the old space once most of them have
  // survived a scavenge (allocation-site pretenuring). Bursts of single events made it do so for
  // sites whose objects live for one e-mail (its render, its statements' rows), which then died in
  // the old space: in the instant part of `npm run bench:pipeline`, a full collection every ~3 s
  // marking the ~75 MB that live, and 0.27 ms of V8's helper threads an event. Off, set here before
  // the roles allocate: our CPU an event 1.49 / 1.25 / 1.34 → 1.09 / 1.09 / 1.22 ms (alternated with
  // the build before); the big digests and the matcher the same (issue 11's record, 24th round).
  setFlagsFromString('--no-allocation-site-pretenuring');
  const deps = createDeps(config, {
    ...(options.logDestination && { logger: createLogger({ level: config.logLevel, name: 'api', destination: options.logDestination }) }),
    ...(options.now && { now: options.now }),
  });
  const { logger } = deps;
  await migrate({ url: config.databaseUrl, schema: config.databaseSchema, logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) } });
  // The API's pool cancels statements past API_STATEMENT_TIMEOUT_MS; the workers' set-based statements
  // (a digest of thousands of matches, a reconcile) may run longer, so they have a pool of their own.
  const workerDb = config.roles.some((role) => role !== 'api')
    ? createDatabase({ url: config.databaseUrl, schema: config.databaseSchema, poolSize: config.databasePoolSize })
    : undefined;
  const runtime = await startWorkerRoles({
    config, db: workerDb ?? deps.db, queues: deps.queues, logger, roles: config.roles, transport: options.transport, now: options.now, metrics: deps.metrics,
  });
  deps.roles = { names: runtime.roles, isReady: () => runtime.isReady(), checks: runtime.checks };
  // With the match role here too, ingested events are matched in this process, without a job.
  deps.matchHere = runtime.matchHere;
  deps.matchInStore = runtime.matchInStore;
  // With the send role here too, what the API delivers (a flush, a test send) is sent in this process, without a job.
  deps.sendHere = runtime.sendHere;

  let app: FastifyInstance | undefined;
  let subscriber: ReturnType<typeof createRedis> | undefined;
  if (config.roles.includes('api')) {
    const built = await buildApp(deps);
    app = built.app;
    subscriber = createRedis(config.redis, 'notify-api-invalidations', 'subscriber');
    subscriber.on('error', (error) => logger.warn({ err: error }, 'redis subscriber error'));
    await subscribeToKeyInvalidations(subscriber, config.queuePrefix, () => built.keyCache.clear());
    if (!config.adminToken) logger.warn('ADMIN_TOKEN is not set: the operator API refuses every call');
    if (!config.ingestTokens.length) logger.warn('INGEST_TOKEN is not set: ingest refuses every call');
    if (options.listen !== false) await app.listen({ port: config.http.port, host: config.http.host });
    else await app.ready();
  }
  logger.info({ roles: config.roles }, 'started');

  let stopping: Promise<void> | undefined;
  return {
    config,
    deps,
    runtime,
    app,
    stop({ timeoutMs = STOP_TIMEOUT_MS } = {}) {
      stopping ??= (async () => {
        const deadline = Date.now() + timeoutMs;
        // New connections are refused at once; requests in flight are answered.
        if (app) await Promise.race([app.close(), atDeadline(deadline)]);
        // No new jobs; jobs in flight finish, or return to their queue when their lock expires.
        await runtime.close({ deadline });
        await subscriber?.quit().catch(() => {});
        await closeDeps(deps);
        await workerDb?.close().catch(() => {});
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
