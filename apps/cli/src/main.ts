import { parseArgs } from 'node:util';
import { loadConfig } from '@notify/config';
import { Conflict, NotFound, ValidationFailed } from '@notify/core';
import { createDatabase, migrate } from '@notify/db';
import { announceInvalidation, createRedis } from '@notify/api';
import { runCommand, UsageError, USAGE } from './commands';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    email: { type: 'string' },
    timezone: { type: 'string' },
    groups: { type: 'string' },
    rps: { type: 'string' },
    rpm: { type: 'string' },
    quota: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help || positionals.length === 0) {
  console.log(USAGE);
  process.exit(0);
}

const config = loadConfig();
await migrate({ url: config.databaseUrl });
const db = createDatabase({ url: config.databaseUrl, poolSize: 2 });
const invalidateKeys = async () => {
  // Best effort: API instances forget cached keys within a second anyway.
  const redis = createRedis(config.redisUrl, 'notify-cli');
  redis.on('error', () => {});
  await Promise.race([announceInvalidation(redis), new Promise((resolve) => setTimeout(resolve, 2000))]).catch(() => {});
  redis.disconnect();
};

let exitCode = 0;
try {
  const { help: _help, ...flags } = values;
  console.log(JSON.stringify(await runCommand({ db, invalidateKeys }, positionals, flags), null, 2));
} catch (error) {
  exitCode = 1;
  if (error instanceof ValidationFailed) {
    for (const issue of error.parameters) console.error(`${issue.param}: ${issue.details.join(' ')}`);
  } else if (error instanceof NotFound || error instanceof Conflict) {
    console.error(error.details);
  } else if (error instanceof UsageError) {
    console.error(`${error.message}\n\n${USAGE}`);
    exitCode = 2;
  } else {
    throw error;
  }
} finally {
  await db.close();
}
process.exit(exitCode);
