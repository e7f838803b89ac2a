import { Redis } from 'ioredis';

/** A Redis connection for commands (not for BullMQ workers, which need their own blocking ones). */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    // Answer fast when Redis is away instead of queueing requests behind it.
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
    lazyConnect: false,
  });
}
