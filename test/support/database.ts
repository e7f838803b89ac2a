import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase, migrate, type Database } from '@notify/db';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A freshly migrated schema of its own, so test files run in parallel without meeting. */
export async function createTestDatabase(): Promise<Database & { drop(): Promise<void> }> {
  // The creation time in the name lets a later run clear what a killed run left, and only that.
  const schema = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await migrate({ url: DATABASE_URL, schema });
  const db = createDatabase({ url: DATABASE_URL, schema, poolSize: 5 });
  return {
    ...db,
    async drop() {
      await db.close();
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

/** One event of `scope` stored for `organizationId`, not matched yet: its key, as match jobs carry it. */
export async function storeUnmatchedEvent(db: Pick<Database, 'pool'>, organizationId: string, scope: string): Promise<[string, string]> {
  const id = `e-${randomBytes(4).toString('hex')}`;
  await db.pool.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title) VALUES ($1, $2, $3, now(), 'a.example', 't')`, [organizationId, id, scope]);
  return [organizationId, id];
}
