// The API under load for `npm run bench:api`, in a process of its own so the load
// generator does not share its event loop. Forked by bench/api.ts, which passes the
// schema and admin token in the environment and talks to it over IPC:
//   child → parent  { type: 'ready', port }            listening on 127.0.0.1:port
//   parent → child  { type: 'stats' }                  child → parent { type: 'stats', keyLookups }
//   parent → child  { type: 'stop' }                   closes everything and exits 0
// The two bench routes exist only here, never in the production app.
import type { AddressInfo } from 'node:net';
import { buildApp, closeDeps, createDeps, createDatabase, createLogger, loadConfig, migrate } from './support/notify';

export type ParentMessage = { type: 'stats' } | { type: 'stop' };
export type ChildMessage = { type: 'ready'; port: number } | { type: 'stats'; keyLookups: number; poolQueries: number } | { type: 'failed'; error: string };

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const schema = process.env.BENCH_SCHEMA;
  if (!schema || !/^bench_[0-9a-f]+$/.test(schema)) throw new Error('BENCH_SCHEMA must be bench_<hex>');
  const config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
    REDIS_URL: process.env.REDIS_URL,
    ADMIN_TOKEN: process.env.BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
  });

  await migrate({ url: config.databaseUrl, schema });
  const db = createDatabase({ url: config.databaseUrl, schema, poolSize: config.databasePoolSize });

  // Counts the key lookups (findPrincipalByKey is the only raw query on api_keys), so
  // the report can show that authentication does not ask the database per request.
  let keyLookups = 0;
  let poolQueries = 0;
  const query = db.pool.query.bind(db.pool);
  db.pool.query = ((...args: Parameters<typeof query>) => {
    poolQueries++;
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (text?.includes('FROM api_keys')) keyLookups++;
    return query(...args);
  }) as typeof db.pool.query;

  const deps = createDeps(config, { db, logger: createLogger({ level: 'silent' }) });
  const { app } = await buildApp(deps);
  app.get('/bench/bare', { config: { auth: 'public' } }, async () => ({ ok: true }));
  app.get('/bench/noop', { config: { auth: 'apikey', group: 'platform' } }, async () => ({ ok: true }));
  await app.listen({ host: config.http.host, port: 0 });

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const deadline = setTimeout(() => process.exit(code || 1), 10_000);
    deadline.unref();
    await app.close().catch(() => {});
    await closeDeps(deps);
    // process.exit (not a kill) lets --cpu-prof write its profile.
    process.exit(code);
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stats') send({ type: 'stats', keyLookups, poolQueries });
    if (message.type === 'stop') void stop(0);
  });
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  // An orphan (the parent died) must not keep serving forever.
  process.on('disconnect', () => void stop(0));

  send({ type: 'ready', port: (app.server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
