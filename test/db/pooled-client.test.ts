import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '@notify/db';
import { DATABASE_URL } from '../support/database';

// A full collection on demand, as `node --expose-gc` gives one.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Whether what `run` returns is still on the heap once nothing of ours holds it. */
async function heldAfter(run: () => Promise<object>): Promise<boolean> {
  const ref = new WeakRef(await run());
  // A WeakRef keeps its target until the current job ends.
  await new Promise((resolve) => setTimeout(resolve, 0));
  collectGarbage();
  return ref.deref() !== undefined;
}

describe('the database pools', () => {
  const opened: Array<{ end(): Promise<void> } | Database> = [];
  afterEach(async () => {
    for (const pool of opened.splice(0)) await ('close' in pool ? pool.close() : pool.end());
  });

  it('keep nothing of the result of the query that opened a connection', async () => {
    const db = createDatabase({ url: DATABASE_URL, poolSize: 2 });
    opened.push(db);
    for (const pool of [db.pool, db.hotPool]) {
      expect(pool.totalCount).toBe(0);
      expect(await heldAfter(() => pool.query('SELECT generate_series(1, 1000) AS n'))).toBe(false);
      expect(pool.totalCount).toBe(1);
    }
  });

  it("(pg's own client, as the pools had it, held that result as long as the connection lived)", async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    opened.push(pool);
    expect(await heldAfter(() => pool.query('SELECT generate_series(1, 1000) AS n'))).toBe(true);
    // A later query's result is not held: only the one that opened the connection.
    expect(await heldAfter(() => pool.query('SELECT generate_series(1, 1000) AS n'))).toBe(false);
  });
});
