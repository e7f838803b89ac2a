import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { quoteIdent } from './client';

/**
 * Applies Prisma-format migrations (prisma/migrations/<name>/migration.sql)
 * without Prisma's schema engine, keeping the `_prisma_migrations` table exactly
 * as `prisma migrate deploy` would, so either tool can take over from the other.
 */

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'prisma', 'migrations');

// The advisory lock key Prisma Migrate itself takes, so our runner and Prisma exclude each other.
const PRISMA_ADVISORY_LOCK = 72707369;

export interface MigrationLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface MigrateOptions {
  url: string;
  schema?: string;
  migrationsDir?: string;
  logger?: MigrationLogger;
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const BOOKKEEPING_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** Returns the names of the migrations it applied (empty when the database was current). */
export async function migrate(options: MigrateOptions): Promise<string[]> {
  const schema = options.schema ?? 'public';
  const logger = options.logger;
  const migrations = await readMigrations(options.migrationsDir);
  const client = new pg.Client({ connectionString: options.url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`SET search_path TO ${quoteIdent(schema)}`);
    await client.query(BOOKKEEPING_TABLE);
    const { rows } = await client.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
    if (failed) {
      throw new MigrationError(
        `Migration ${failed.migration_name} started but did not finish. Fix the database by hand, then mark it ` +
          `with \`prisma migrate resolve\` (or delete its row from _prisma_migrations) before starting again.`,
      );
    }
    const applied = new Map(rows.filter((row) => row.finished_at !== null).map((row) => [row.migration_name, row]));
    for (const [name, row] of applied) {
      const file = migrations.find((migration) => migration.name === name);
      if (!file) logger?.warn(`Migration ${name} is applied but missing from the migrations folder.`);
      else if (file.checksum !== row.checksum) logger?.warn(`Migration ${name} was modified after it was applied.`);
    }
    const done: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.name)) continue;
      const id = randomUUID();
      await client.query(
        'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
        [id, migration.checksum, migration.name],
      );
      try {
        // One transaction per migration: a failure leaves no half-applied schema behind.
        await client.query('BEGIN');
        await client.query(migration.sql);
        await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, String(error)]);
        throw new MigrationError(`Migration ${migration.name} failed: ${(error as Error).message}`);
      }
      logger?.info(`Applied migration ${migration.name}`);
      done.push(migration.name);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]).catch(() => {});
    await client.end();
  }
}
