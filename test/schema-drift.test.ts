import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSchemaDrift, migrate, quoteIdent, SCHEMA_PRISMA_PATH } from '@notify/db';

const url = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const createdSchemas: string[] = [];

/** A uniquely named schema with every migration applied; dropped in afterAll. */
async function freshSchema(): Promise<string> {
  const schema = `drift_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  createdSchemas.push(schema);
  await migrate({ url, schema });
  return schema;
}

async function runSql(schema: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${quoteIdent(schema)}` });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of createdSchemas) await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  } finally {
    await client.end();
  }
});

describe('schema drift between prisma/schema.prisma and the migrated database', () => {
  let pristine: string;

  beforeAll(async () => {
    pristine = await freshSchema();
  });

  it('finds no drift in a freshly migrated schema', async () => {
    const report = await findSchemaDrift({ url, schema: pristine });
    expect(report.problems).toEqual([]);
  });

  it('reports a changed column type, a dropped index, an extra column and a changed ON DELETE', async () => {
    const schema = await freshSchema();
    await runSql(schema, [
      'ALTER TABLE notification_rules ALTER COLUMN delivery_hour TYPE integer',
      'DROP INDEX api_keys_organization_id_created_at_idx',
      'ALTER TABLE team_members ADD COLUMN nickname text',
      `ALTER TABLE api_keys DROP CONSTRAINT api_keys_organization_id_fkey,
         ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id)
           REFERENCES organizations(id) ON DELETE RESTRICT ON UPDATE CASCADE`,
    ]);

    const { problems } = await findSchemaDrift({ url, schema });

    expect([...problems].sort()).toEqual(
      [
        'notification_rules.delivery_hour: expected smallint, database has integer',
        'index api_keys(organization_id, created_at): missing from the database (expected name "api_keys_organization_id_created_at_idx")',
        'team_members.nickname: column exists in the database but not in schema.prisma',
        'foreign key api_keys(organization_id) → organizations(id): expected ON DELETE CASCADE, database has ON DELETE RESTRICT',
      ].sort(),
    );
  });

  it("reports a partial index whose condition is not the schema's, or that lost it", async () => {
    const schema = await freshSchema();
    await runSql(schema, [
      'DROP INDEX matches_pending_due_at_idx',
      "CREATE INDEX matches_pending_due_at_idx ON matches (due_at) WHERE status = 'delivered'",
    ]);
    const changed = await findSchemaDrift({ url, schema });
    expect(changed.problems.join('\n')).toContain("expected condition (status = 'pending'::match_status), database has (status = 'delivered'::match_status)");

    await runSql(schema, ['DROP INDEX matches_pending_due_at_idx', 'CREATE INDEX matches_pending_due_at_idx ON matches (due_at)']);
    const plain = await findSchemaDrift({ url, schema });
    expect(plain.problems.join('\n')).toContain("expected condition (status = 'pending'::match_status), database has none");

    // The condition comes from the schema's text: an unnamed partial index cannot be matched to the database's, and says so.
    const source = await readFile(SCHEMA_PRISMA_PATH, 'utf8');
    const unnamed = source.replace('map: "matches_pending_due_at_idx", ', '');
    expect(unnamed).not.toBe(source);
    const dir = await mkdtemp(join(tmpdir(), 'schema-drift-'));
    try {
      const schemaPrismaPath = join(dir, 'schema.prisma');
      await writeFile(schemaPrismaPath, unnamed);
      await expect(findSchemaDrift({ url, schema: pristine, schemaPrismaPath })).rejects.toThrow(/A partial index needs map: "name"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports enum, nullability, default, naming and extra-table drift', async () => {
    const schema = await freshSchema();
    await runSql(schema, [
      "ALTER TYPE frequency ADD VALUE 'yearly'",
      'ALTER TABLE team_members ALTER COLUMN name SET NOT NULL',
      "ALTER TABLE organizations ALTER COLUMN timezone SET DEFAULT 'Europe/Berlin'",
      'ALTER TABLE organizations ALTER COLUMN plan_groups DROP DEFAULT',
      'ALTER INDEX api_keys_key_hash_key RENAME TO api_keys_hash_unique',
      'CREATE INDEX notification_rules_name_idx ON notification_rules (name)',
      'CREATE TABLE scratch (id integer PRIMARY KEY)',
    ]);

    const { problems } = await findSchemaDrift({ url, schema });

    expect([...problems].sort()).toEqual(
      [
        'enum frequency: expected values (instant, hourly, daily, weekly, monthly), database has (instant, hourly, daily, weekly, monthly, yearly)',
        'team_members.name: expected nullable, database has NOT NULL',
        "organizations.timezone: expected default 'UTC', database has 'Europe/Berlin'",
        "organizations.plan_groups: expected default ARRAY['platform'], database has none",
        'unique index api_keys(key_hash): named "api_keys_hash_unique" in the database, expected "api_keys_key_hash_key"',
        'index notification_rules(name): exists in the database but not in schema.prisma (named "notification_rules_name_idx")',
        'table scratch: exists in the database but not in schema.prisma',
      ].sort(),
    );
  });

  it('reports history that is not partitioned as it should be, and a month missing its own unique index', async () => {
    const schema = await freshSchema();
    const month = new Date().toISOString().slice(0, 7).replace('-', '_');
    await runSql(schema, [
      // deliveries rebuilt as a plain table with the same columns, keys and indexes.
      'CREATE TABLE deliveries_plain (LIKE deliveries INCLUDING ALL)',
      'DROP TABLE deliveries',
      'ALTER TABLE deliveries_plain RENAME TO deliveries',
      `DROP INDEX events_p${month}_key`,
    ]);

    const { problems } = await findSchemaDrift({ url, schema });

    expect(problems).toContain('table deliveries: expected partitioned by range (created_at), database has a plain table');
    expect(problems).toContain(`partition events_p${month} of events: missing its unique index (organization_id, id)`);
  });

  it('reports the migrated database as drifting from a modified schema.prisma', async () => {
    const original = await readFile(SCHEMA_PRISMA_PATH, 'utf8');
    // Organization.name is the first VarChar(255) in the Organization model.
    const organization = original.indexOf('model Organization {');
    expect(organization).toBeGreaterThanOrEqual(0);
    const varchar = original.indexOf('@db.VarChar(255)', organization);
    expect(varchar).toBeGreaterThan(organization);
    const modified =
      original.slice(0, varchar) +
      '@db.VarChar(100)' +
      original.slice(varchar + '@db.VarChar(255)'.length) +
      `
enum AuditKind {
  created
  deleted

  @@map("audit_kind")
}

model AuditEvent {
  id        String    @id @default(uuid()) @db.Uuid
  kind      AuditKind
  createdAt DateTime  @default(now()) @map("created_at") @db.Timestamptz(3)

  @@map("audit_events")
}
`;
    const dir = await mkdtemp(join(tmpdir(), 'schema-drift-'));
    try {
      const schemaPrismaPath = join(dir, 'schema.prisma');
      await writeFile(schemaPrismaPath, modified);

      const { problems } = await findSchemaDrift({ url, schema: pristine, schemaPrismaPath });

      expect([...problems].sort()).toEqual(
        [
          'enum audit_kind: missing from the database',
          'table audit_events: missing from the database',
          'organizations.name: expected character varying(100), database has character varying(255)',
        ].sort(),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
