import { ConfigError, loadConfig } from '@notify/config';
import { createDatabase, migrate, MigrationError } from '@notify/db';
import { announceKeyInvalidation, bumpRuleListVersion, createRedis, redisChannels } from '@notify/queues';
import { runCli, type CliSession } from './cli';

/** Connects to the database of the configuration (DATABASE_URL, DATABASE_SCHEMA), migrating it first. */
async function open(): Promise<CliSession> {
  const config = loadConfig();
  await migrate({ url: config.databaseUrl, schema: config.databaseSchema });
  const db = createDatabase({ url: config.databaseUrl, schema: config.databaseSchema, poolSize: 2 });
  // Best effort: API instances forget cached keys within a second and list pages within a minute anyway.
  const tell = async (what: (redis: ReturnType<typeof createRedis>) => Promise<unknown>) => {
    const redis = createRedis(config.redis, 'notify-cli');
    redis.on('error', () => {});
    await Promise.race([what(redis), new Promise((resolve) => setTimeout(resolve, 2000))]).catch(() => {});
    redis.disconnect();
  };
  const invalidateKeys = () => tell((redis) => announceKeyInvalidation(redis, config.queuePrefix));
  const rulesChanged = (organizationId: string) => tell((redis) => bumpRuleListVersion(redis, config.queuePrefix, organizationId));
  // The match stage's rule index holds each digest rule's member zones: it reloads the organization's rules
  // (the message subscribeToRuleChanges reads; within a minute anyway, by its full resynchronisation).
  const clocksChanged = (organizationId: string) =>
    tell((redis) => redis.publish(redisChannels(config.queuePrefix).rulesChanged, JSON.stringify({ organizationIds: [organizationId] })));
  return { context: { db, invalidateKeys, rulesChanged, clocksChanged }, close: () => db.close() };
}

let exitCode: number;
try {
  exitCode = await runCli(process.argv.slice(2), { out: (text) => console.log(text), err: (text) => console.error(text) }, open);
} catch (error) {
  // Configuration and migration problems are the operator's to fix: their message says how.
  console.error(error instanceof ConfigError || error instanceof MigrationError ? error.message : error);
  exitCode = 1;
}
process.exit(exitCode);
