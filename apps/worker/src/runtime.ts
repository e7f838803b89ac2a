import { Worker, type ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config, Role } from '@notify/config';
import type { Database } from '@notify/db';
import { createMailRenderer, createMailTransport, type MailTransport } from '@notify/mail';
import type { Logger } from '@notify/observability';
import {
  reconcile,
  requestDueDigests,
  RuleIndex,
  subscribeToRuleChanges,
  type MailerContext,
  type PipelineContext,
} from '@notify/pipeline';
import { LOCK_DURATION_MS, QUEUE_NAMES, type Queues } from '@notify/queues';
import { createProcessors, type ProcessorMap } from './processors';

export interface WorkerRuntimeOptions {
  config: Config;
  db: Database;
  queues: Queues;
  logger: Logger;
  roles: Role[];
  now?: () => Date;
  /** Tests and benchmarks may hand in a transport; otherwise config decides (SMTP or outbox). */
  transport?: MailTransport;
}

export interface WorkerRuntime {
  roles: Role[];
  index: RuleIndex;
  mailTransport: MailTransport | undefined;
  /** Whether every started role is running (for readiness). */
  isReady(): boolean;
  /** Stops taking new jobs, lets jobs in flight finish, closes connections. */
  close(): Promise<void>;
}

function messageIdDomain(from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1];
  return domain ?? 'notify.local';
}

/** Repeats `task` every `ms`, never overlapping itself, logging rather than dying on errors. */
function every(ms: number, task: () => Promise<unknown>, logger: Logger, name: string): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = task()
      .catch((error) => logger.warn({ err: error, task: name }, 'periodic task failed'))
      .finally(() => {
        running = undefined;
      });
  }, ms);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** Starts the worker roles the configuration asks for (matcher, scheduler, mailer). */
export async function startWorkerRoles(options: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  const { config, db, queues, logger } = options;
  const roles = options.roles.filter((role) => role !== 'api');
  const now = options.now ?? (() => new Date());
  const pipeline: PipelineContext = { db, queues, now, instantCoalesceMs: config.pipeline.instantCoalesceMs };
  const index = new RuleIndex();
  const connection: ConnectionOptions = new Redis(config.redisUrl, { maxRetriesPerRequest: null, connectionName: 'notify-workers' });
  const workerBase = { connection, prefix: config.queuePrefix, lockDuration: LOCK_DURATION_MS };
  const workers: Worker[] = [];
  const stops: Array<() => Promise<void>> = [];
  let subscriber: Redis | undefined;
  let mailer: MailerContext | undefined;
  let transport: MailTransport | undefined;

  if (roles.includes('mailer')) {
    transport = options.transport ?? createMailTransport({ smtpUrl: config.mail.smtpUrl, outboxDir: config.mail.outboxDir, maxConnections: config.mail.maxConnections });
    mailer = { ...pipeline, renderer: await createMailRenderer(), transport, from: config.mail.from, messageIdDomain: messageIdDomain(config.mail.from) };
  }
  const processors: ProcessorMap = createProcessors({ pipeline, index, mailer });
  const start = <T>(name: string, processor: (job: import('bullmq').Job<T>) => Promise<unknown>, concurrency: number) => {
    const worker = new Worker<T>(name, processor, { ...workerBase, concurrency });
    worker.on('failed', (job, error) => logger.warn({ job_id: job?.id, queue: name, attempts: job?.attemptsMade, err: error }, 'job failed'));
    worker.on('error', (error) => logger.warn({ queue: name, err: error }, 'worker error'));
    workers.push(worker as unknown as Worker);
  };

  if (roles.includes('matcher')) {
    await index.loadAll(db);
    subscriber = new Redis(config.redisUrl, { connectionName: 'notify-rule-changes' });
    subscriber.on('error', (error) => logger.warn({ err: error }, 'rule change subscriber error'));
    await subscribeToRuleChanges(subscriber, (change) => {
      index.refresh(db, change).catch((error) => logger.warn({ err: error }, 'rule index refresh failed'));
    });
    stops.push(every(config.pipeline.ruleResyncMs, () => index.loadAll(db), logger, 'rule resync'));
    for (const name of QUEUE_NAMES.events) start(name, processors.match, config.pipeline.matchConcurrency);
    logger.info({ rules: index.size }, 'matcher started');
  }
  if (roles.includes('scheduler')) {
    start(QUEUE_NAMES.digest, processors.digest, 4);
    stops.push(every(config.pipeline.schedulerTickMs, () => requestDueDigests(pipeline), logger, 'due digests'));
    stops.push(
      every(config.pipeline.reconcileIntervalMs, async () => {
        const result = await reconcile(pipeline, { graceMs: config.pipeline.reconcileGraceMs });
        if (result.events || result.deliveries) logger.info(result, 'reconciler re-requested lost work');
      }, logger, 'reconcile'),
    );
    logger.info('scheduler started');
  }
  if (roles.includes('mailer')) {
    start(QUEUE_NAMES.mail, processors.mail, config.pipeline.mailConcurrency);
    logger.info({ transport: transport?.kind }, 'mailer started');
  }

  let closed = false;
  return {
    roles,
    index,
    mailTransport: transport,
    isReady: () => !closed && workers.every((worker) => worker.isRunning()),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled(stops.map((stop) => stop()));
      await Promise.allSettled(workers.map((worker) => worker.close()));
      await subscriber?.quit().catch(() => {});
      await transport?.close().catch(() => {});
      (connection as Redis).disconnect();
    },
  };
}
