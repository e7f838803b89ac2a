import pg from 'pg';
import { Redis } from 'ioredis';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Fails the run early and clearly when PostgreSQL or Redis is not there, and clears schemas earlier runs left. */
export default async function setup(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`PostgreSQL is not reachable at ${DATABASE_URL}: ${(error as Error).message}`, { cause: error });
  }
  // Schemas of runs that died before their own clean-up, older than an hour (so a
  // run going on beside this one keeps its own).
  const { rows } = await client.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'test\\_%'");
  const hourAgo = Date.now() - 3600_000;
  for (const { nspname } of rows) {
    const created = parseInt(nspname.split('_')[1] ?? '', 36);
    if (Number.isNaN(created) || created < hourAgo) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  }
  await client.end();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Redis is not reachable at ${REDIS_URL}: ${(error as Error).message}`, { cause: error });
  } finally {
    redis.disconnect();
  }
}
