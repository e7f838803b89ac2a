import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { analyzeGrownTables, claimDeliveries, createDatabase, markDeliveriesSent, withTransaction, type TransactionOptions } from '@notify/db';
import { createTestDatabase, DATABASE_URL } from '../support/database';

// The schedule role's statistics keeper: a table that has doubled since it was last analyzed is
// analyzed, and a prepared statement's cached plan, made for the table when it was small, is
// made again for its size.
describe('analyzeGrownTables', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  /** PostgreSQL counts a session's changes in its statistics when the session reports them: asks it to, now. */
  async function insertOrganizations(client: { query(text: string, values?: unknown[]): Promise<unknown> }, count: number) {
    await client.query(`INSERT INTO organizations (id, name) SELECT gen_random_uuid(), 'o' || g FROM generate_series(1, $1::int) g`, [count]);
    await client.query('SELECT pg_stat_force_next_flush()');
  }

  /** Waits until PostgreSQL's statistics count at least `changes` changes to organizations since it was analyzed. */
  async function changesCounted(changes: number): Promise<void> {
    for (let tries = 0; tries < 50; tries++) {
      const { rows } = await db.pool.query<{ n: string }>(
        `SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'organizations'`,
      );
      if (Number(rows[0]?.n ?? 0) >= changes) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`PostgreSQL's statistics never counted ${changes} changes to organizations`);
  }

  /** Calls analyzeGrownTables until it analyzes something (the statistics arrive asynchronously), at most a few seconds. */
  async function analyzedSoon(): Promise<string[]> {
    for (let tries = 0; tries < 50; tries++) {
      const analyzed = await analyzeGrownTables(db);
      if (analyzed.length) return analyzed;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return [];
  }

  /** The plan a session keeps for one of its prepared statements, run with `args` (SQL literals). */
  async function keptPlan(session: { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> }, statement: string, args: string): Promise<string> {
    const { rows } = await session.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE "${statement}"(${args})`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  it('replaces a cached plan made for a small table once the table has doubled, and leaves a table that has not', async () => {
    const client = await db.pool.connect();
    try {
      await insertOrganizations(client, 5);
      await client.query('ANALYZE organizations');
      // A prepared statement whose plan is kept (generic), made while the table has 5 rows: a scan of it all.
      await client.query('SET plan_cache_mode = force_generic_plan');
      const id = randomUUID();
      await client.query({ name: 'one-organization', text: 'SELECT name FROM organizations WHERE id = $1', values: [id] });
      const plan = () => keptPlan(client, 'one-organization', `'${id}'`);
      expect(await plan()).toMatch(/Seq Scan on organizations/);

      // Fewer changes than the minimum: nothing to do.
      await insertOrganizations(client, 500);
      await changesCounted(500);
      expect(await analyzeGrownTables(db)).toEqual([]);

      // 20,000 rows later the kept plan still reads the whole table, until the statistics are refreshed.
      await insertOrganizations(client, 20_000);
      expect(await plan()).toMatch(/Seq Scan on organizations/);
      expect(await analyzedSoon()).toEqual(['organizations']);
      expect(await plan()).toMatch(/Index Scan using organizations_pkey on organizations/);

      // Analyzed: not again until it doubles once more.
      expect(await analyzeGrownTables(db)).toEqual([]);
      await client.query('DEALLOCATE "one-organization"');
      await client.query('RESET plan_cache_mode');
    } finally {
      client.release();
    }
  });

  it('keeps one plan per prepared statement on the claims\' pool, and leaves the choice to PostgreSQL elsewhere', async () => {
    const mode = async (pool: { query(text: string): Promise<{ rows: Array<{ plan_cache_mode: string }> }> }) => (await pool.query('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode;
    expect(await mode(db.hotPool)).toBe('force_generic_plan');
    expect(await mode(db.pool)).toBe('auto');
  });

  it('finds deliveries by id on the claims\' pool with a plan kept from when their month was empty', async () => {
    // One connection, so the claim prepared while the month's partition is empty is the one explained after.
    const one = createDatabase({ url: DATABASE_URL, schema: db.schema, poolSize: 1 });
    try {
      const org = randomUUID();
      const rule = randomUUID();
      await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'kept plans')`, [org]);
      await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope) VALUES ($1, $2, 'r', 'asset_dns_changed')`, [rule, org]);
      await claimDeliveries(one, [randomUUID()], 30_000, 500);
      await markDeliveriesSent(one, [{ deliveryId: randomUUID(), messageId: '<m@test>' }]);
      // The month's deliveries grow, and nothing analyzes them: the plans stay those made for none.
      await db.pool.query(
        `INSERT INTO deliveries (id, rule_id, email, period_key, event_count) SELECT gen_random_uuid(), $1, 'm@example.com', 'p' || g, 1 FROM generate_series(1, 3000) g`,
        [rule],
      );
      const ids = `'{${randomUUID()}}'`;
      for (const plan of [await keptPlan(one.hotPool, 'notify.claim-deliveries', `${ids}, 30000, 500`), await keptPlan(one.hotPool, 'notify.mark-deliveries-sent', `${ids}, '{<m@test>}'`)]) {
        expect(plan).not.toMatch(/Seq Scan on deliveries/);
        expect(plan).toMatch(/Index Scan using deliveries_p\d{4}_\d{2}_pkey|Bitmap Index Scan on deliveries_p\d{4}_\d{2}_pkey/);
      }
    } finally {
      await one.close();
    }
  });

  it('keeps one plan per prepared statement in a transaction that asks for it, and only in it', async () => {
    // One connection, so the transactions after the first run on the same session.
    const one = createDatabase({ url: DATABASE_URL, schema: db.schema, poolSize: 1 });
    try {
      const inside = (options?: TransactionOptions) => withTransaction(one, async (tx) => {
        const { rows } = await (tx as unknown as pg.PoolClient).query<{ plan_cache_mode: string }>("SELECT current_setting('plan_cache_mode') AS plan_cache_mode");
        return rows[0]!.plan_cache_mode;
      }, options);
      expect(await inside({ genericPlans: true })).toBe('force_generic_plan');
      expect(await inside()).toBe('auto');
      expect(await inside({ genericPlans: false })).toBe('auto');
    } finally {
      await one.close();
    }
  });
});
