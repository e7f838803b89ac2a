import { loadConfig, ConfigError } from '@notify/config';
import { migrate } from '@notify/db';
import { buildApp } from './app';
import { closeDeps, createDeps, createRedis } from './deps';
import { subscribeToInvalidations } from './plugins/key-cache';

/** `npm start`: migrate, then serve. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const deps = createDeps(config);
  const { logger } = deps;
  await migrate({ url: config.databaseUrl, logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) } });
  const { app, keyCache } = await buildApp(deps);
  const subscriber = createRedis(config.redisUrl, 'notify-api-invalidations');
  subscriber.on('error', (error) => logger.warn({ err: error }, 'redis subscriber error'));
  await subscribeToInvalidations(subscriber, keyCache);
  if (!config.adminToken) logger.warn('ADMIN_TOKEN is not set: the operator API refuses every call');
  await app.listen({ port: config.http.port, host: config.http.host });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => process.exit(1), 10_000);
    deadline.unref();
    await app.close();
    await subscriber.quit().catch(() => {});
    await closeDeps(deps);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
