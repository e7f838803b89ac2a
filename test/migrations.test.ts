import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, MigrationError, MIGRATIONS_DIR, readMigrations } from '@notify/db';
import { DATABASE_URL } from './support/database';

const schemas: string[] = [];
const newSchema = () => {
  const schema = `test_mig_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
};

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const schema of schemas) await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

describe('migration runner (Prisma-format migrations without the schema engine)', () => {
  it('applies every migration once and keeps Prisma\'s bookkeeping', async () => {
    const schema = newSchema();
    const files = await readMigrations();
    expect(await migrate({ url: DATABASE_URL, schema })).toEqual(files.map((file) => file.name));
    expect(await migrate({ url: DATABASE_URL, schema })).toEqual([]);
    const rows = await query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number; rolled_back_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM "${schema}"."_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows.map((row) => row.migration_name)).toEqual(files.map((file) => file.name));
    for (const row of rows) {
      const sql = await readFile(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
      expect(row.rolled_back_at).toBeNull();
    }
  });

  it('lets concurrent starts race safely: the migrations run once', async () => {
    const schema = newSchema();
    const results = await Promise.all([1, 2, 3].map(() => migrate({ url: DATABASE_URL, schema })));
    expect(results.flat().length).toBe((await readMigrations()).length);
  });

  it('rolls a failing migration back, records it, and refuses to go on until it is resolved', async () => {
    const schema = newSchema();
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      await mkdir(join(dir, '99990101000000_broken'));
      await writeFile(join(dir, '99990101000000_broken', 'migration.sql'), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;');
      await expect(migrate({ url: DATABASE_URL, schema, migrationsDir: dir })).rejects.toThrow(/99990101000000_broken failed/);
      const tables = await query(`SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'half_done'`, [schema]);
      expect(tables).toHaveLength(0);
      const error = await migrate({ url: DATABASE_URL, schema, migrationsDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(String(error)).toMatch(/did not finish/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('warns when an applied migration was edited afterwards', async () => {
    const schema = newSchema();
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      await migrate({ url: DATABASE_URL, schema, migrationsDir: dir });
      const [first] = await readMigrations(dir);
      await writeFile(join(dir, first!.name, 'migration.sql'), `${first!.sql}\n-- edited\n`);
      const warnings: string[] = [];
      await migrate({ url: DATABASE_URL, schema, migrationsDir: dir, logger: { info: () => {}, warn: (m) => warnings.push(m) } });
      expect(warnings.join('\n')).toContain(`${first!.name} was modified after it was applied`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('partitions the history already stored: every row kept, each in its month, matches beside their events', async () => {
    const schema = newSchema();
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      // The database as it was before partitioning: that migration and every later one not applied yet.
      for (const later of (await readMigrations(dir)).filter((migration) => migration.name >= '20261124010000')) await rm(join(dir, later.name), { recursive: true });
      await migrate({ url: DATABASE_URL, schema, migrationsDir: dir });
      const s = `"${schema}"`;
      await query(`INSERT INTO ${s}.organizations (id, name) VALUES ('00000000-0000-4000-8000-000000000001', 'o')`);
      await query(`INSERT INTO ${s}.team_members (id, organization_id, email) VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'a@x.example')`);
      await query(`INSERT INTO ${s}.notification_rules (id, organization_id, name, scope) VALUES ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', 'r', 'asset_dns_changed')`);
      await query(
        `INSERT INTO ${s}.events (organization_id, id, scope, occurred_at, asset, title, received_at)
         VALUES ('00000000-0000-4000-8000-000000000001', 'old', 'asset_dns_changed', now(), 'a', 't', '2026-03-05T00:00:00Z'),
                ('00000000-0000-4000-8000-000000000001', 'new', 'asset_dns_changed', now(), 'a', 't', now())`,
      );
      await query(
        `INSERT INTO ${s}.matches (rule_id, organization_id, event_id, period_key, due_at)
         SELECT '00000000-0000-4000-8000-000000000003', organization_id, id, 'p-' || id, now() FROM ${s}.events`,
      );
      await query(
        `INSERT INTO ${s}.deliveries (id, rule_id, team_member_id, email, period_key, event_count, created_at)
         VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000002', 'a@x.example', 'p-old', 1, '2026-03-06T00:00:00Z')`,
      );

      expect((await migrate({ url: DATABASE_URL, schema }))[0]).toBe('20261124010000_partitioned_history');

      const where = async (table: string) =>
        (await query<{ part: string }>(`SELECT tableoid::regclass::text AS part FROM ${s}.${table} ORDER BY 1`)).map((row) => row.part.replace(`${schema}.`, ''));
      const month = new Date().toISOString().slice(0, 7).replace('-', '_');
      expect(await where('events')).toEqual([`events_p2026_03`, `events_p${month}`].sort());
      expect(await where('matches')).toEqual([`matches_p2026_03`, `matches_p${month}`].sort());
      expect(await where('deliveries')).toEqual(['deliveries_p2026_03']);
      const matches = await query<{ event_id: string; event_received_at: Date }>(`SELECT event_id, event_received_at FROM ${s}.matches ORDER BY event_id`);
      expect(matches.map((m) => m.event_id)).toEqual(['new', 'old']);
      expect(matches[1]!.event_received_at.toISOString()).toBe('2026-03-05T00:00:00.000Z');
      // Every later migration applied too: a match is known by (rule, event, audience), its primary key.
      const again = await query(
        `INSERT INTO ${s}.matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
         SELECT rule_id, organization_id, event_id, event_received_at, 'again', now() FROM ${s}.matches WHERE event_id = 'new'
         ON CONFLICT ON CONSTRAINT matches_pkey DO NOTHING RETURNING 1`,
      );
      expect(again).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
