export * from './catalog';
export { Queues, DEFAULT_PREFIX, type QueueOptions } from './queues';
export { redisKeys, redisChannels, type RedisKeys, type RedisChannels } from './redis-keys';
export { createRedis, type RedisClient, type RedisPurpose } from './redis';
export { announceKeyInvalidation, subscribeToKeyInvalidations, bumpRuleListVersion } from './signals';
