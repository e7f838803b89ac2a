import type { RedisClient } from './redis';
import { redisChannels, redisKeys } from './redis-keys';

/**
 * What one process tells every other through Redis, so caches follow writes made anywhere (an API
 * instance, the CLI). Each is best effort for its caller: caches also expire on their own.
 */

/** Every API instance forgets the API keys it cached (a key was deleted, a plan changed). */
export async function announceKeyInvalidation(redis: RedisClient, prefix: string): Promise<void> {
  await redis.publish(redisChannels(prefix).apiKeysInvalidated, String(Date.now()));
}

/** Calls `onInvalidate` whenever any process announces a key invalidation. */
export async function subscribeToKeyInvalidations(subscriber: RedisClient, prefix: string, onInvalidate: () => void): Promise<void> {
  const channel = redisChannels(prefix).apiKeysInvalidated;
  subscriber.on('message', (from) => {
    if (from === channel) onInvalidate();
  });
  await subscriber.subscribe(channel);
}

/**
 * Marks an organization's rule lists as changed, for every API instance: the next list request
 * reads the database again. Called before a write is answered, so a client always reads its own writes.
 */
export async function bumpRuleListVersion(redis: RedisClient, prefix: string, organizationId: string): Promise<void> {
  await redis.incr(redisKeys(prefix).ruleListVersion(organizationId));
}
