import { ConfigError, loadConfig } from '@notify/config';
import { createDatabase, migrate, MigrationError } from '@notify/db';
import { announceInvalidation, createRedis } from '@notify/api';
import { runCli, type CliSession } from './cli';

/** Connects to the database of the configuration (DATABASE_URL, DATABASE_SCHEMA), migrating it first. */
async function open(): Promise<CliSession> {
  const config = loadConfig();
  await migrate({ url: config.databaseUrl, schema: config.databaseSchema });
  const db = createDatabase({ url: config.databaseUrl, schema: config.databaseSchema, poolSize: 2 });
  const invalidateKeys = async () => {
    // Best effort: API instances forget cached keys within a second anyway.
    const redis = createRedis(config.redisUrl, 'notify-cli');
    redis.on('error', () => {});
    await Promise.race([announceInvalidation(redis), new Promise((resolve) => setTimeout(resolve, 2000))]).catch(() => {});
    redis.disconnect();
  };
  return { context: { db, invalidateKeys }, close: () => db.close() };
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
