import { loadConfig, type Config } from '@notify/config';
import { createDatabase, migrate } from '@notify/db';
import { buildApp, closeDeps, createDeps, type AppDeps } from '@notify/api';
import { createRedis, subscribeToKeyInvalidations } from '@notify/queues';
import type { MailTransport } from '@notify/mail';
import { createLogger, type DestinationStream } from '@notify/observability';
import { startWorkerRoles, type WorkerRuntime } from '@notify/worker';
import { composePipeline } from './compose-pipeline';
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
  // the old space, and full collections kept marking what lives. Off, set here before the roles
  // allocate, an event costs less of our CPU (measured: see commit 9feb5b2).
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
  // The pipeline is assembled once, here: the API's ingest, flushes and test sends hand their work to
  // this process's stages when it runs them (the fast paths), to the queues otherwise.
  const db = workerDb ?? deps.db;
  const pipeline = await composePipeline(config, {
    db, ingestDb: deps.db, queues: deps.queues, logger, metrics: deps.metrics, now: deps.now, transport: options.transport,
  });
  deps.pipeline = pipeline;
  const runtime = await startWorkerRoles({ config, pipeline, db, queues: deps.queues, logger, roles: config.roles, now: options.now, metrics: deps.metrics });
  deps.roles = { names: runtime.roles, isReady: () => runtime.isReady(), checks: runtime.checks };

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
