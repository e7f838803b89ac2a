import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '@notify/config';

/** One Redis node (or a sentinel-watched master) or a Redis Cluster: every command works on both. */
export type RedisClient = Redis | Cluster;

/**
 * What a connection is for:
 * - `commands`: answers fast when Redis is away (one retry) instead of queueing behind it;
 * - `blocking`: BullMQ workers and queues' blocking reads, which must wait for Redis however long;
 * - `subscriber`: pub/sub, resubscribed by ioredis after every reconnect.
 */
export type RedisPurpose = 'commands' | 'blocking' | 'subscriber';

function optionsFor(purpose: RedisPurpose, name: string): RedisOptions {
  return {
    connectionName: name,
    maxRetriesPerRequest: purpose === 'commands' ? 1 : null,
    ...(purpose === 'commands' && { enableAutoPipelining: true }),
  };
}

/**
 * A connection to wherever the configuration says Redis is (REDIS_URL, REDIS_CLUSTER_NODES or
 * REDIS_SENTINELS). A URL string stands for one node.
 */
export function createRedis(target: RedisTarget | string, name: string, purpose: RedisPurpose = 'commands'): RedisClient {
  const where: RedisTarget = typeof target === 'string' ? { kind: 'single', url: target } : target;
  const options = optionsFor(purpose, name);
  switch (where.kind) {
    case 'single':
      return new Redis(where.url, options);
    case 'sentinel':
      return new Redis({ ...options, sentinels: where.sentinels, name: where.masterName, username: where.username, password: where.password });
    case 'cluster':
      return new Cluster(where.nodes, {
        redisOptions: { ...options, username: where.username, password: where.password },
        enableAutoPipelining: purpose === 'commands',
        // A failover takes the cluster a few seconds: commands wait for it rather than fail at once.
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 300,
        slotsRefreshTimeout: 2000,
      });
  }
}
