import { poolOf, type DatabaseHandle } from '../client';

/** Fewer changes than this never call for new statistics: a small table's plans hardly depend on them. */
export const ANALYZE_MIN_CHANGES = 1000;

/**
 * Analyzes the tables of the schema (each month partition of the history is one) that have
 * changed by at least as many rows as they had when last analyzed (and by `minChanges` at
 * least): a table that has doubled, or a new month's partition filling up. Returns the tables
 * analyzed.
 *
 * Why not leave it to autovacuum: the hot statements are prepared, and PostgreSQL keeps a
 * prepared statement's generic plan until the statistics of a table it reads change. A plan made
 * while a month's deliveries partition was nearly empty reads it whole to find a delivery by id,
 * for each claim and "sent" record of a wave of digests (measured in commit ef4d1ae), and it
 * lasts until an analyze (autovacuum looks once a minute at best, and may be off). Analyzing when
 * a table doubles costs a few analyzes per partition and month. A table another session is
 * analyzing is skipped (SKIP_LOCKED), so several schedulers do not queue behind each other.
 */
export async function analyzeGrownTables(db: DatabaseHandle, minChanges = ANALYZE_MIN_CHANGES): Promise<string[]> {
  const pool = poolOf(db);
  const { rows } = await pool.query<{ name: string }>(
    // The schema's own tables only (pg_stat_user_tables would read every table of the database first).
    `SELECT c.oid::regclass::text AS name
       FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
        AND pg_stat_get_mod_since_analyze(c.oid) >= greatest($1::bigint, c.reltuples::bigint)
      ORDER BY pg_stat_get_mod_since_analyze(c.oid) DESC`,
    [minChanges],
  );
  if (!rows.length) return [];
  const names = rows.map((row) => row.name);
  // Names as regclass writes them: quoted where they need it, from the catalog, never from input.
  await pool.query(`ANALYZE (SKIP_LOCKED) ${names.join(', ')}`);
  return names;
}
