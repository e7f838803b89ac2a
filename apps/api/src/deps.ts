import type { RedisClient } from '@notify/queues';
import type { Config } from '@notify/config';
import { createDatabase, type Database } from '@notify/db';
import { createLogger, createMetrics, type Logger, type Metrics } from '@notify/observability';
import { createRedis, Queues, redisChannels } from '@notify/queues';
import { assemblePipeline, createRuleChangeAnnouncer, type Pipeline, type PipelineResources, type RuleChangeAnnouncer } from '@notify/pipeline';
import { RuleListCache } from './routes/notification-rules/list-cache';

/** What the HTTP app needs from the outside world, built once per process. */
export interface AppDeps {
  config: Config;
  db: Database;
  redis: RedisClient;
  /** Producers of every queue (ingest publishes events, operators flush and retry). */
  queues: Queues;
  /** Tells the match stage that rules changed, so its in-memory rule index follows within a second. */
  ruleChanges: RuleChangeAnnouncer;
  /** Serialized rule-list pages of this process, bounded by RULE_LIST_CACHE_BYTES. */
  ruleListCache: RuleListCache;
  /** The worker roles started in this process, for readiness; `checks` are their own (e.g. SMTP reachability). */
  roles?: { names: string[]; isReady(): boolean; checks?: Record<string, () => Promise<unknown>> };
  /**
   * The process's stages: ingest, and the deliver stage of flushes and test sends. By default
   * (an API alone) joined to the rest through the queues; the composition root (apps/server) hands
   * in the pipeline it assembled with the worker roles of the process.
   */
  pipeline: Pipeline;
  logger: Logger;
  /** This process's Prometheus registry and metrics (`/metrics`). */
  metrics: Metrics;
  /** The clock of what the API records for the pipeline (a member's zone change); tests pass theirs. */
  now: () => Date;
}

/** What the API's own pipeline work (a retry, a test send, a preview) reads and writes, on the process's clock. */
export function resourcesOf(deps: AppDeps): PipelineResources {
  return { db: deps.db, queues: deps.queues, now: deps.now, metrics: deps.metrics.pipeline };
}

export function createDeps(config: Config, overrides: Partial<AppDeps> = {}): AppDeps {
  const logger = overrides.logger ?? createLogger({ level: config.logLevel, name: 'api' });
  // The API's work is bounded in time; the workers build their own pool without the bound (apps/server).
  const db =
    overrides.db ??
    createDatabase({ url: config.databaseUrl, schema: config.databaseSchema, poolSize: config.databasePoolSize, statementTimeoutMs: config.apiStatementTimeoutMs });
  const redis = overrides.redis ?? createRedis(config.redis, 'notify-api');
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const queues =
    overrides.queues ??
    new Queues({ connection: redis, prefix: config.queuePrefix, send: { attempts: config.mail.attempts, backoffMs: config.mail.backoffMs } });
  const ruleChanges = overrides.ruleChanges ?? createRuleChangeAnnouncer(redis, redisChannels(config.queuePrefix).rulesChanged);
  // The queues share `redis`, whose listener above logs connection errors once; without a listener
  // of their own, BullMQ would print each of them to stderr once per queue.
  for (const queue of queues.all()) queue.on('error', (error) => logger.debug({ err: error, queue: queue.name }, 'queue error'));
  const ruleListCache = overrides.ruleListCache ?? new RuleListCache(redis, config.queuePrefix, { maxBytes: config.ruleListCacheBytes });
  const metrics = overrides.metrics ?? createMetrics();
  metrics.trackQueues(() => queues.all());
  const now = overrides.now ?? (() => new Date());
  const pipeline = overrides.pipeline ?? assemblePipeline({
    resources: { db, queues, now, metrics: metrics.pipeline },
    roles: [],
    fastPaths: config.pipeline.fastPaths,
    log: logger,
    ingest: ingestSettings(config, logger),
  });
  return { config, db, redis, queues, ruleChanges, ruleListCache, logger, roles: overrides.roles, metrics, now, pipeline };
}

/** How ingest stores and hands on events, in any process. */
export function ingestSettings(config: Config, logger: Logger): { lingerMs: number; onPublishError: (error: unknown, scope: string, events: number) => void } {
  return {
    lingerMs: config.pipeline.ingestLingerMs,
    // The requests of a moment share a statement and match hand-offs, so a failed publish is the batch's, logged once.
    onPublishError: (error, scope, events) => logger.warn({ err: error, scope, events }, 'events stored but not published; the reconciler will publish them'),
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.queues.close();
  await Promise.allSettled([deps.db.close(), deps.redis.quit()]);
}
