import type { RedisClient } from '@notify/queues';
import type { Config } from '@notify/config';
import { createDatabase, type Database } from '@notify/db';
import { createLogger, createMetrics, type Logger, type Metrics } from '@notify/observability';
import { createRedis, Queues, redisChannels } from '@notify/queues';
import { createRuleChangeAnnouncer, type MatchHere, type MatchInStore, type PipelineContext, type RuleChangeAnnouncer, type SendHere } from '@notify/pipeline';
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
  /** Set when this process runs the match role too: ingest hands its events there rather than to the match queues. */
  matchHere?: MatchHere;
  /** Set with matchHere: small batches of ingested events are matched in the transaction that stores them. */
  matchInStore?: MatchInStore;
  /** Set when this process runs the send role too: the deliveries the API makes (a flush, a test send) are sent here rather than by send jobs. */
  sendHere?: SendHere;
  logger: Logger;
  /** This process's Prometheus registry and metrics (`/metrics`). */
  metrics: Metrics;
  /** The clock of what the API records for the pipeline (a member's zone change); tests pass theirs. */
  now: () => Date;
}

/** The pipeline's use cases as the API runs them (an operator's flush, a customer's test send or preview), on the process's clock. */
export function pipelineContextOf(deps: AppDeps): PipelineContext {
  return { db: deps.db, queues: deps.queues, now: deps.now, instantCoalesceMs: deps.config.pipeline.instantCoalesceMs, sendHere: deps.sendHere };
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
  return { config, db, redis, queues, ruleChanges, ruleListCache, logger, roles: overrides.roles, metrics, now: overrides.now ?? (() => new Date()) };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.queues.close();
  await Promise.allSettled([deps.db.close(), deps.redis.quit()]);
}
