import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export { PrismaClient };

export interface DatabaseOptions {
  url: string;
  /** A PostgreSQL schema other than `public`; tests give each file its own. */
  schema?: string;
  poolSize?: number;
  /**
   * Cancels any statement of this pool's connections that runs longer (PostgreSQL `statement_timeout`,
   * lock waits included); unset: no bound. The API's pool has one, the workers' set-based statements do not.
   */
  statementTimeoutMs?: number;
}

/**
 * What code outside this package holds of a database: something to hand to its named
 * operations, and to close. The pipeline sees only this, so it depends on operations ("claim a
 * delivery", "record matches"), never on the pool, Prisma or a table's layout.
 */
export interface DatabaseHandle {
  readonly schema: string;
  close(): Promise<void>;
}

/**
 * One pg pool serves both Prisma (through the driver adapter) and the raw,
 * set-based SQL of the hot paths, so a process holds one set of connections.
 * Processes create it and pass it on as a DatabaseHandle; `pool` and `prisma` are for this
 * package's operations (and tests that look at tables).
 */
export interface Database extends DatabaseHandle {
  prisma: PrismaClient;
  pool: pg.Pool;
  /** The claims' and "sent" records' connections (see hotPoolOf); as many at most as `pool`'s, made when first needed. */
  hotPool: pg.Pool;
}

declare const transaction: unique symbol;

/**
 * An open transaction, for the operations that take one: callers pass it on and never
 * query through it. What it wraps (a pg client) is this package's own.
 */
export interface Transaction {
  readonly [transaction]: true;
}

/** The pool behind a handle; every handle is a Database made by createDatabase. */
export function poolOf(db: DatabaseHandle): pg.Pool {
  return (db as Database).pool;
}

/**
 * The pool of the send stage's claims and "sent" records, whose sessions keep one generic plan per
 * prepared statement (plan_cache_mode=force_generic_plan). Left to itself, PostgreSQL planned
 * these afresh on nearly every call (planning over the partitioned history costs more than running
 * them; measured in commit 769e0c4), their plan for the call's few ids looking cheaper than the
 * kept one. A kept plan is made when first needed, from the statistics of the
 * moment, and again when a table it reads is analyzed, which the schedule role does whenever one
 * has doubled (analyzeGrownTables). Only statements that find rows by their keys belong here, and
 * these sessions never scan a table whole where an index finds the rows (enable_seqscan=off): a
 * plan kept from when a month's deliveries were none read the partition whole for each claim's
 * and "sent" record's few ids until its first analyze (at 1,000 deliveries, on the statistics
 * keeper's next pass). Kept plans made both the claims and the "sent" records cheaper (measured in
 * commit a6a5146). Everything else stays on `pool`, where PostgreSQL chooses each time unless a transaction asks
 * otherwise (`genericPlans`): a kept plan made while a table was empty read it whole when a match
 * transaction kept one for its deliveries statement (measured in commit 0c36aa8; the deliveries
 * of its first matches are now made from the rows it inserts, found by keys).
 */
export function hotPoolOf(db: DatabaseHandle): pg.Pool {
  return (db as Database).hotPool;
}

/** The connection behind a transaction. */
export function clientOf(tx: Transaction): pg.PoolClient {
  return tx as unknown as pg.PoolClient;
}

/**
 * A statement of the hot path, prepared once per connection under `name` so PostgreSQL keeps its
 * plan: planning these statements over the partitioned history tables cost more than running them
 * (measured in commit 11f8cc7). The text must be the same on every call. PostgreSQL decides per call whether to keep
 * a generic plan or plan afresh, except on hotPoolOf's connections.
 */
export function named(name: string, text: string, values: unknown[]): pg.QueryConfig {
  return { name: `notify.${name}`, text, values };
}

/**
 * An array parameter of values that need no quoting in PostgreSQL's array syntax (uuids, integers
 * in decimal), written as one literal: pg quotes and escapes every element of a JavaScript array,
 * which for the thousands of ids of a hot statement costs more than the statement's own parse.
 * Only for values the process itself made or read back from the database, never for callers' text
 * (nor for '', which the syntax must quote); null is NULL.
 */
export function plainArray(values: readonly (string | number | bigint | null)[]): string {
  return `{${values.map((value) => value ?? 'NULL').join(',')}}`;
}

/**
 * The answer of a statement that says, for each of the `count` rows it was given, whether it took
 * it: one character a row ('1' taken), in the order given, from
 * `string_agg(CASE WHEN … THEN '1' ELSE '0' END, '' ORDER BY <ordinality>)`. A row returned for each
 * would cost the process more to parse than the statement costs PostgreSQL (noticeFindings,
 * recordMatches).
 */
export function rowAnswers(answers: string | null | undefined, count: number, statement: string): boolean[] {
  const text = answers ?? '';
  if (text.length !== count) throw new Error(`${statement}: ${text.length} answers for ${count} rows (a row given twice?)`);
  const taken = new Array<boolean>(count);
  for (let i = 0; i < count; i++) taken[i] = text.charCodeAt(i) === 0x31;
  return taken;
}

export function quoteIdent(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * pg's client, but for what it keeps of the callback its connect is given. pg's client holds
 * that callback for as long as the connection lives (in the scope its connection's listeners
 * close over), and the pool's callback holds the request that made the client: for `pool.query`,
 * its promise and so its result. The first result of every pooled connection stayed on the heap
 * for the connection's life (the match stage's loaded rules; a heap snapshot in commit ef35107
 * shows it). Here the client holds a forwarder that lets go of the callback once it is called.
 */
export class PooledClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
    if (!callback) return super.connect();
    let pending: ((...args: unknown[]) => void) | undefined = callback as (...args: unknown[]) => void;
    super.connect((...args: unknown[]) => {
      const call = pending;
      pending = undefined;
      call?.(...args);
    });
  }
}

type ConnectCallback = ((err: Error) => void) | ((err: null, client: pg.Client) => void);

export function createDatabase(options: DatabaseOptions): Database {
  const schema = options.schema ?? 'public';
  // Raw queries find the same tables Prisma does.
  const settings = `-c search_path=${quoteIdent(schema)}${options.statementTimeoutMs ? ` -c statement_timeout=${Math.floor(options.statementTimeoutMs)}` : ''}`;
  const pool = new pg.Pool({ Client: PooledClient, connectionString: options.url, max: options.poolSize ?? 10, options: settings });
  const hotPool = new pg.Pool({ Client: PooledClient, connectionString: options.url, max: options.poolSize ?? 10, options: `${settings} -c plan_cache_mode=force_generic_plan -c enable_seqscan=off` });
  // A dropped connection is replaced by the pool; without a listener the error would crash the process.
  pool.on('error', () => {});
  hotPool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
  let closed = false;
  return {
    prisma,
    pool,
    hotPool,
    schema,
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await Promise.all([pool.end(), hotPool.end()]);
    },
  };
}

export interface TransactionOptions {
  /**
   * The transaction's prepared statements keep one generic plan (plan_cache_mode=force_generic_plan,
   * set with BEGIN: no round trip of its own), as on hotPoolOf's connections and with the same
   * condition: only for statements that find their rows by id. For a statement whose plan for a
   * call's few ids looks cheaper than the kept one every time, PostgreSQL otherwise plans every call.
   * Unlike those connections, seq scans stay allowed: the kept plans then probe by index the month
   * partitions that hold rows and scan the empty ones (next month's, the default), which is all but
   * free; with enable_seqscan=off they probed those too, for each match a flush reads, and the flush
   * statement cost PostgreSQL more (measured in commit 5e9e221). A plan made while a month was empty is made again when
   * the statistics keeper analyzes the month (analyzeGrownTables; test/pipeline/kept-plans.test.ts).
   */
  genericPlans?: boolean;
  /**
   * The longest any statement of the transaction waits for a lock (lock_timeout, set with BEGIN as
   * well), after which it fails: for a transaction that would rather give up and do its work
   * another way than wait on another's.
   */
  lockTimeoutMs?: number;
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it
 * returns, rolled back when it throws, the connection released either way.
 * A connection that dies meanwhile (a database restart) fails the transaction
 * and is thrown away, never the process: a checked-out client's `error` event
 * has no listener of the pool's.
 */
export async function withTransaction<T>(db: DatabaseHandle, work: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const client = await poolOf(db).connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query(`BEGIN${options.genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''}${
      options.lockTimeoutMs ? `; SET LOCAL lock_timeout = ${Math.max(1, Math.floor(options.lockTimeoutMs))}` : ''}`);
    const result = await work(client as unknown as Transaction);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!broken) await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.removeListener('error', onError);
    // A broken connection is destroyed rather than handed to the next caller.
    client.release(broken ?? false);
  }
}
