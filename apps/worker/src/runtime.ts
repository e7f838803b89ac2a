import { Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Config, Role } from '@notify/config';
import type { DatabaseHandle } from '@notify/db';
import { maskUrlPassword, type Logger, type Metrics } from '@notify/observability';
import { reconcile, maintainHistory, RETENTION_INTERVAL_MS, refreshStatistics, STATISTICS_INTERVAL_MS, subscribeToRuleChanges, type Pipeline, type PipelineResources } from '@notify/pipeline';
import { createRedis, queueKeyPrefix, QUEUE_NAMES, redisChannels, type Queues, type RedisClient } from '@notify/queues';
import { createProcessors, type Processor } from './processors';

export interface WorkerRuntimeOptions {
  config: Config;
  /** The stages, assembled once by the composition root (apps/server). */
  pipeline: Pipeline;
  db: DatabaseHandle;
  queues: Queues;
  logger: Logger;
  roles: Role[];
  now?: () => Date;
  /** Counts what the pipeline does and how long jobs take; nothing is counted without it. */
  metrics?: Metrics;
}

export interface WorkerRuntime {
  roles: Role[];
  pipeline: Pipeline;
  /** Whether every started role is running (for readiness). */
  isReady(): boolean;
  /** Readiness checks of the started roles: the send role's destination (`smtp` or `outbox`). */
  checks: Record<string, () => Promise<unknown>>;
  /**
   * Stops taking new jobs, lets jobs in flight finish, closes connections. Jobs still running at
   * `deadline` (epoch ms) are left to BullMQ: their lock expires and another worker takes them.
   */
  close(options?: { deadline?: number }): Promise<void>;
}

/** How long a readiness answer about the mail server is reused, so probes do not open a connection each. */
export const MAIL_CHECK_TTL_MS = 10_000;

/** Runs `check` at most once per `ttlMs`; callers in between share its answer (or its failure). */
export function cachedCheck(check: () => Promise<unknown>, ttlMs: number): () => Promise<unknown> {
  let last: { at: number; result: Promise<unknown> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= ttlMs) {
      const result = check();
      result.catch(() => {});
      last = { at: now, result };
    }
    return last.result;
  };
}

function secondsOf(job: Job): number {
  if (!job.processedOn) return 0;
  return ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000;
}

/** Repeats `task` every `ms` (and once at once with `atStart`), never overlapping itself, logging rather than dying on errors. */
function every(ms: number, task: () => Promise<unknown>, logger: Logger, name: string, options: { atStart?: boolean } = {}): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = task()
      .catch((error) => logger.warn({ err: error, task: name }, 'periodic task failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, ms);
  if (options.atStart) run();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** Starts the worker roles the configuration asks for (match, schedule, deliver, send) on the assembled stages: their queues' workers and periodic tasks. */
export async function startWorkerRoles(options: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  const { config, db, queues, logger, pipeline } = options;
  const roles = options.roles.filter((role) => role !== 'api');
  const now = options.now ?? (() => new Date());
  const metrics = options.metrics;
  const resources: PipelineResources = { db, queues, now, metrics: metrics?.pipeline };
  const connection = createRedis(config.redis, 'notify-workers', 'blocking');
  // A killed worker's jobs go back to the queue once their lock runs out (checked as often).
  const lockMs = config.pipeline.jobLockMs;
  const workerBase = { connection, lockDuration: lockMs, stalledInterval: lockMs };
  const workers: Worker[] = [];
  const stops: Array<() => Promise<void>> = [];
  let subscriber: RedisClient | undefined;
  const processors = createProcessors(pipeline);
  const checks: Record<string, () => Promise<unknown>> = {};
  const start = <T>(name: string, processor: Processor<T>, concurrency: number, extra: Partial<WorkerOptions> = {}) => {
    // Every line about a job carries its id and queue.
    const run = async (job: Job<T>) => {
      const log = logger.child({ queue: name, job_id: job.id });
      log.debug({ attempt: job.attemptsMade + 1 }, 'job started');
      const result = await processor(job, log);
      log.debug('job completed');
      return result;
    };
    const worker = new Worker<T>(name, run, { ...workerBase, prefix: queueKeyPrefix(config.queuePrefix, name), concurrency, ...extra });
    worker.on('completed', (job) => metrics?.jobFinished(name, 'completed', secondsOf(job as Job)));
    worker.on('failed', (job, error) => {
      if (job) metrics?.jobFinished(name, 'failed', secondsOf(job as Job));
      logger.warn({ job_id: job?.id, queue: name, attempts: job?.attemptsMade, err: error }, 'job failed');
    });
    worker.on('error', (error) => logger.warn({ queue: name, err: error }, 'worker error'));
    workers.push(worker as unknown as Worker);
  };
  for (const stage of ['match', 'deliver', 'send'] as const) {
    const here = pipeline.inProcess[stage];
    if (here) metrics?.trackInProcess(stage, () => here.pending);
  }

  if (roles.includes('match') && pipeline.match) {
    const { index } = pipeline.match;
    await index.loadAll(db);
    subscriber = createRedis(config.redis, 'notify-rule-changes', 'subscriber');
    subscriber.on('error', (error) => logger.warn({ err: error }, 'rule change subscriber error'));
    await subscribeToRuleChanges(subscriber, (change) => {
      index.refresh(db, change).catch((error) => logger.warn({ err: error }, 'rule index refresh failed'));
    }, redisChannels(config.queuePrefix).rulesChanged);
    stops.push(every(config.pipeline.ruleResyncMs, () => index.loadAll(db), logger, 'rule resync'));
    for (const name of QUEUE_NAMES.match) start(name, processors.match, config.pipeline.matchConcurrency);
    logger.info({ rules: index.size }, 'match role started');
  }
  if (roles.includes('schedule') && pipeline.schedule) {
    const schedule = pipeline.schedule;
    // A tick that finds a full page of due periods, and delivers them here, looks again once they are delivered.
    stops.push(every(config.pipeline.scheduleTickMs, () => schedule.tick(), logger, 'due periods'));
    stops.push(
      every(config.pipeline.reconcileIntervalMs, async () => {
        const result = await reconcile(resources, { graceMs: config.pipeline.reconcileGraceMs });
        if (result.events || result.periods || result.deliveries) logger.info(result, 'reconciler re-requested lost work');
      }, logger, 'reconcile'),
    );
    const retention = async () => {
      const result = await maintainHistory(resources, config.pipeline.retentionDays);
      if (result.created.length || result.dropped.length) logger.info(result, 'history partitions maintained');
      if (result.held.length) logger.warn({ held: result.held }, 'history past retention kept: it still holds work owed');
    };
    stops.push(every(RETENTION_INTERVAL_MS, retention, logger, 'retention', { atStart: true }));
    stops.push(
      every(STATISTICS_INTERVAL_MS, async () => {
        const analyzed = await refreshStatistics(resources);
        if (analyzed.length) logger.debug({ analyzed }, 'planner statistics refreshed for grown tables');
      }, logger, 'statistics'),
    );
    logger.info('schedule role started');
  }
  if (roles.includes('deliver')) {
    // Jobs the process holds at once; they share a couple of transactions (the deliver stage's).
    start(QUEUE_NAMES.deliver, processors.deliver, 50);
    logger.info('deliver role started');
  }
  if (roles.includes('send') && pipeline.send) {
    const destination = pipeline.send.destination;
    checks[destination.kind] = cachedCheck(() => destination.verify(), MAIL_CHECK_TTL_MS);
    // No real limit: BullMQ honours a pause (queue.rateLimit, see the send processor) only on a limited queue.
    start(QUEUE_NAMES.send, processors.send, config.pipeline.sendConcurrency, { limiter: { max: 1_000_000_000, duration: 1000 } });
    const target = destination.kind === 'smtp' && config.mail.smtpUrl ? { smtp: maskUrlPassword(config.mail.smtpUrl) } : { outbox: config.mail.outboxDir };
    logger.info({ transport: destination.kind, ...target, compose_threads: config.mail.composeThreads, fast_paths: pipeline.fastPaths }, 'send role started');
  }

  let closed = false;
  return {
    roles,
    pipeline,
    isReady: () => !closed && workers.every((worker) => worker.isRunning()),
    checks,
    async close({ deadline } = {}) {
      if (closed) return;
      closed = true;
      // Periodic tasks and fetching stop at once; jobs in flight get until the deadline to finish.
      const stopped = Promise.allSettled(stops.map((stop) => stop()));
      const finished = Promise.allSettled([...workers.map((worker) => worker.close()), pipeline.close()]);
      let timer: NodeJS.Timeout | undefined;
      const late = deadline === undefined
        ? new Promise<never>(() => {})
        : new Promise<'late'>((resolve) => {
            timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
          });
      const outcome = await Promise.race([Promise.all([stopped, finished]), late]);
      clearTimeout(timer);
      if (outcome === 'late') {
        // Their locks are no longer renewed: once one expires, BullMQ hands the job to another worker.
        logger.warn('jobs still running at the shutdown deadline: leaving them to another worker once their lock expires');
      }
      await subscriber?.quit().catch(() => {});
      await pipeline.send?.destination.close().catch(() => {});
      connection.disconnect();
    },
  };
}
