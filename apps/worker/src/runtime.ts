import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { ConfigError, type Config, type Role } from '@notify/config';
import type { DatabaseHandle } from '@notify/db';
import { compileTemplates, composeInLoop, composeInThreads, createMailTransport, rendererFor, senderAddress, type MailComposer, type MailTransport } from '@notify/mail';
import { maskUrlPassword, type Logger, type Metrics } from '@notify/observability';
import {
  OutagePause,
  reconcile,
  maintainHistory,
  RETENTION_INTERVAL_MS,
  refreshStatistics,
  scheduleTick,
  STATISTICS_INTERVAL_MS,
  RuleIndex,
  subscribeToRuleChanges,
  type MatchHere,
  type MatchInStore,
  type PipelineContext,
  type SendContext,
  type SendHere,
} from '@notify/pipeline';
import { createRedis, queueKeyPrefix, QUEUE_NAMES, redisChannels, type Queues, type RedisClient } from '@notify/queues';
import { createProcessors, type Processor } from './processors';
import { InProcessMatching } from './processors/match-here';
import { InProcessDelivery } from './processors/deliver-here';
import { InProcessSending } from './processors/send-here';

export interface WorkerRuntimeOptions {
  config: Config;
  db: DatabaseHandle;
  queues: Queues;
  logger: Logger;
  roles: Role[];
  now?: () => Date;
  /** Tests and benchmarks may hand in a transport; otherwise config decides (SMTP or outbox). */
  transport?: MailTransport;
  /** Counts what the pipeline does and how long jobs take; nothing is counted without it. */
  metrics?: Metrics;
}

export interface WorkerRuntime {
  roles: Role[];
  index: RuleIndex;
  mailTransport: MailTransport | undefined;
  /** With the match role: matches the events this process ingests without a job (the API's ingest hands them here). */
  matchHere: MatchHere | undefined;
  /** With the match role: matches small batches of the events this process ingests in the transaction that stores them. */
  matchInStore: MatchInStore | undefined;
  /** With the send role: sends the deliveries this process makes without a job (the API's flushes and test sends hand them here). */
  sendHere: SendHere | undefined;
  /** Whether every started role is running (for readiness). */
  isReady(): boolean;
  /** Readiness checks of the started roles: the send role's SMTP server (`smtp`) or outbox folder (`outbox`). */
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

/** The domain of MAIL_FROM's address; a MAIL_FROM that is not one address stops the start (it would fail every e-mail). */
function messageIdDomain(from: string): string {
  let address: string;
  try {
    address = senderAddress(from);
  } catch {
    throw new ConfigError(`MAIL_FROM must be one address, with a display name or not (e.g. "Security Alerts <alerts@example.com>"), not ${JSON.stringify(from.slice(0, 200))}`);
  }
  return address.slice(address.lastIndexOf('@') + 1);
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

/** Starts the worker roles the configuration asks for (match, schedule, deliver, send). */
export async function startWorkerRoles(options: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  const { config, db, queues, logger } = options;
  const roles = options.roles.filter((role) => role !== 'api');
  const now = options.now ?? (() => new Date());
  const metrics = options.metrics;
  // With the send role, the deliveries this process makes are sent here first (InProcessSending, made below).
  let sendingHere: InProcessSending | undefined;
  const sendHere: SendHere | undefined = roles.includes('send')
    ? { take: (deliveryIds, claimed) => sendingHere?.take(deliveryIds, claimed) ?? [...deliveryIds], room: () => sendingHere?.room() ?? 0 }
    : undefined;
  const pipeline: PipelineContext = { db, queues, now, instantCoalesceMs: config.pipeline.instantCoalesceMs, metrics: metrics?.pipeline, sendHere };
  // Checked before any connection is made.
  const mailDomain = roles.includes('send') ? messageIdDomain(config.mail.from) : undefined;
  const index = new RuleIndex();
  const connection = createRedis(config.redis, 'notify-workers', 'blocking');
  // A killed worker's jobs go back to the queue once their lock runs out (checked as often).
  const lockMs = config.pipeline.jobLockMs;
  const workerBase = { connection, lockDuration: lockMs, stalledInterval: lockMs };
  const workers: Worker[] = [];
  const stops: Array<() => Promise<void>> = [];
  let subscriber: RedisClient | undefined;
  let matchHere: InProcessMatching | undefined;
  let deliverHere: InProcessDelivery | undefined;
  let send: SendContext | undefined;
  let transport: MailTransport | undefined;
  let composer: MailComposer | undefined;

  if (roles.includes('send')) {
    transport = options.transport ?? createMailTransport({ smtpUrl: config.mail.smtpUrl, outboxDir: config.mail.outboxDir, maxConnections: config.mail.maxConnections, dkim: config.mail.dkim });
    const templates = await compileTemplates();
    const threads = config.mail.composeThreads;
    composer = threads > 0
      ? composeInThreads(templates, { threads, onThreadError: (error) => logger.warn({ err: error }, 'compose thread stopped: starting another') })
      : composeInLoop(rendererFor(templates));
    send = {
      ...pipeline,
      composer,
      transport,
      from: config.mail.from,
      messageIdDomain: mailDomain ?? messageIdDomain(config.mail.from),
      unsubscribe: config.unsubscribe,
      claimTimeoutMs: config.pipeline.jobLockMs,
    };
  }
  const sendPause = new OutagePause(1000, config.pipeline.sendOutageMaxPauseMs);
  const { jobs: processors, match, matchStored, deliver, send: sendInProcess } = createProcessors({ pipeline, index, send, sendPause, matchTransactions: config.pipeline.matchConcurrency, mailConcurrency: config.pipeline.sendConcurrency });
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

  if (roles.includes('match')) {
    await index.loadAll(db);
    subscriber = createRedis(config.redis, 'notify-rule-changes', 'subscriber');
    subscriber.on('error', (error) => logger.warn({ err: error }, 'rule change subscriber error'));
    await subscribeToRuleChanges(subscriber, (change) => {
      index.refresh(db, change).catch((error) => logger.warn({ err: error }, 'rule index refresh failed'));
    }, redisChannels(config.queuePrefix).rulesChanged);
    stops.push(every(config.pipeline.ruleResyncMs, () => index.loadAll(db), logger, 'rule resync'));
    for (const name of QUEUE_NAMES.match) start(name, processors.match, config.pipeline.matchConcurrency);
    const matching = new InProcessMatching(match, logger, undefined, matchStored);
    metrics?.trackInProcess('match', () => matching.pending);
    matchHere = matching;
    logger.info({ rules: index.size }, 'match role started');
  }
  if (roles.includes('schedule')) {
    // A process that delivers too delivers what it finds due itself (InProcessDelivery), without a job a period.
    if (roles.includes('deliver')) {
      const delivering = new InProcessDelivery(deliver, logger);
      metrics?.trackInProcess('deliver', () => delivering.pending);
      deliverHere = delivering;
    }
    // A tick that finds a full page of due periods, and delivers them here, looks again once they are delivered (scheduleTick).
    stops.push(every(config.pipeline.scheduleTickMs, () => scheduleTick(pipeline, deliverHere), logger, 'due periods'));
    stops.push(
      every(config.pipeline.reconcileIntervalMs, async () => {
        const result = await reconcile(pipeline, { graceMs: config.pipeline.reconcileGraceMs });
        if (result.events || result.periods || result.deliveries) logger.info(result, 'reconciler re-requested lost work');
      }, logger, 'reconcile'),
    );
    const retention = async () => {
      const result = await maintainHistory(pipeline, config.pipeline.retentionDays);
      if (result.created.length || result.dropped.length) logger.info(result, 'history partitions maintained');
      if (result.held.length) logger.warn({ held: result.held }, 'history past retention kept: it still holds work owed');
    };
    stops.push(every(RETENTION_INTERVAL_MS, retention, logger, 'retention', { atStart: true }));
    stops.push(
      every(STATISTICS_INTERVAL_MS, async () => {
        const analyzed = await refreshStatistics(pipeline);
        if (analyzed.length) logger.debug({ analyzed }, 'planner statistics refreshed for grown tables');
      }, logger, 'statistics'),
    );
    logger.info('schedule role started');
  }
  if (roles.includes('deliver')) {
    // Jobs the process holds at once; they share a couple of transactions (the deliver processor).
    start(QUEUE_NAMES.deliver, processors.deliver, 50);
    logger.info('deliver role started');
  }
  if (roles.includes('send') && transport) {
    const mail = transport;
    checks[mail.kind] = cachedCheck(() => mail.verify(), MAIL_CHECK_TTL_MS);
    // No real limit: BullMQ honours a pause (queue.rateLimit, see the send processor) only on a limited queue.
    start(QUEUE_NAMES.send, processors.send, config.pipeline.sendConcurrency, { limiter: { max: 1_000_000_000, duration: 1000 } });
    // Its lines say the work had no job: `in_process` and the stage, where a job's name its id and queue.
    const sending = new InProcessSending(sendInProcess, logger.child({ stage: 'send', in_process: true }), sendPause);
    metrics?.trackInProcess('send', () => sending.pending);
    sendingHere = sending;
    const target = mail.kind === 'smtp' && config.mail.smtpUrl ? { smtp: maskUrlPassword(config.mail.smtpUrl) } : { outbox: config.mail.outboxDir };
    logger.info({ transport: mail.kind, ...target, compose_threads: config.mail.composeThreads }, 'send role started');
  }

  let closed = false;
  return {
    roles,
    index,
    mailTransport: transport,
    matchHere: matchHere?.take,
    matchInStore: matchHere?.inStore,
    sendHere,
    isReady: () => !closed && workers.every((worker) => worker.isRunning()),
    checks,
    async close({ deadline } = {}) {
      if (closed) return;
      closed = true;
      // Periodic tasks and fetching stop at once; jobs in flight get until the deadline to finish.
      const stopped = Promise.allSettled(stops.map((stop) => stop()));
      const finished = Promise.allSettled([...workers.map((worker) => worker.close()), matchHere?.close(), deliverHere?.close(), sendingHere?.close()]);
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
      await transport?.close().catch(() => {});
      await composer?.close().catch(() => {});
      connection.disconnect();
    },
  };
}
