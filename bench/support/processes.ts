// Plumbing of `npm run bench:pipeline`: child processes, the SMTP sink, and what each part
// creates (schemas, queue prefixes, children) and its release.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { DATABASE_URL, REDIS_URL, root, sleep } from './common';
import { quoteIdent } from './notify';
import type { ChildMessage, ParentMessage } from './pipeline-child';

// ---------------------------------------------------------------------------------
// Child processes (bench/support/pipeline-child.ts)

export interface Child {
  name: string;
  pid: number;
  ready: Extract<ChildMessage, { type: 'ready' }>;
  send(message: ParentMessage): void;
  /** Sends `message` (if any) and waits for the next message of type `answer`. */
  next<T extends ChildMessage['type']>(answer: T, options?: { send?: ParentMessage; timeoutMs?: number }): Promise<Extract<ChildMessage, { type: T }>>;
  exited(): boolean;
  stop(): Promise<void>;
}

/**
 * Which code of the service the children run: by default the built JavaScript (`dist/`, which
 * `npm run bench:pipeline` builds first), as a deployment runs it (`NODE_ENV=production npm start`);
 * with BENCH_SOURCE=1 the TypeScript sources through tsx, as `npm start` does (tsx's wrappers, such as
 * the name it gives every function made at run time, cost the service about 10% more CPU).
 * The bench's own code (this file, the child's entry, the drivers) always runs through tsx.
 */
export const SERVICE_FROM_SOURCE = process.env.BENCH_SOURCE === '1';

export async function startChild(name: string, env: Record<string, string>, timeoutMs = 180_000): Promise<Child> {
  const cpuProf = process.env.BENCH_CPU_PROF;
  const child: ChildProcess = fork(join(root, 'bench', 'support', 'pipeline-child.ts'), [], {
    cwd: root,
    execArgv: [...(process.env.BENCH_IMPORT ? ['--import', process.env.BENCH_IMPORT] : []), '--import', 'tsx', ...(SERVICE_FROM_SOURCE ? ['--conditions=@notify/source'] : []), '--no-deprecation', ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', join(cpuProf, `${name}-${Date.now()}`)] : [])],
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let exitCode: number | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : 0);
      resolve();
    }),
  );
  const listeners = new Set<(message: ChildMessage) => void>();
  child.on('message', (message: ChildMessage) => {
    for (const listener of [...listeners]) listener(message);
  });

  const next: Child['next'] = (answer, options = {}) =>
    new Promise((resolve, reject) => {
      const limit = options.timeoutMs ?? 10_000;
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${name}: no ${answer} message within ${limit / 1000} s`));
      }, limit);
      const listener = (message: ChildMessage) => {
        if (message.type === 'failed') {
          done();
          reject(new Error(`${name} failed:\n${message.error}`));
        } else if (message.type === answer) {
          done();
          resolve(message as Extract<ChildMessage, { type: typeof answer }>);
        }
      };
      listeners.add(listener);
      void exit.then(() => {
        done();
        reject(new Error(`${name} exited (code ${exitCode}) while waiting for ${answer}`));
      });
      if (options.send) child.send(options.send);
    });

  const handle: Child = {
    name,
    pid: child.pid ?? 0,
    ready: undefined as never,
    send: (message) => {
      if (child.connected) child.send(message);
    },
    next,
    exited: () => exitCode !== undefined,
    async stop() {
      if (exitCode !== undefined) return;
      if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
      else child.kill('SIGTERM');
      const late = await Promise.race([exit.then(() => false), sleep(20_000).then(() => true)]);
      if (late) {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
  try {
    handle.ready = await next('ready', { timeoutMs });
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return handle;
}

// ---------------------------------------------------------------------------------
// What a part creates, released whatever happens

export class Resources {
  readonly schemas = new Set<string>();
  readonly prefixes = new Set<string>();
  readonly children = new Set<Child>();
  private readonly closers: Array<() => Promise<unknown>> = [];

  /** A PostgreSQL schema name bench_<hex>, dropped on release. */
  schema(): string {
    const schema = `bench_${randomBytes(6).toString('hex')}`;
    this.schemas.add(schema);
    return schema;
  }

  /** A queue prefix bench-<hex>; its keys `<prefix>:*` are deleted on release. */
  prefix(): string {
    const prefix = `bench-${randomBytes(6).toString('hex')}`;
    this.prefixes.add(prefix);
    return prefix;
  }

  async child(name: string, env: Record<string, string>, timeoutMs?: number): Promise<Child> {
    const child = await startChild(name, env, timeoutMs);
    this.children.add(child);
    return child;
  }

  onRelease(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  async release(): Promise<void> {
    await Promise.allSettled([...this.children].map((child) => child.stop()));
    this.children.clear();
    for (const close of this.closers.splice(0).reverse()) await close().catch((error: unknown) => console.error('  clean-up:', error));
    if (this.prefixes.size) {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3, connectionName: 'bench-cleanup' });
      try {
        for (const prefix of this.prefixes) await deleteKeys(redis, prefix);
        this.prefixes.clear();
      } catch (error) {
        console.error(`  could not delete the queue keys of ${[...this.prefixes].join(', ')}:`, error);
      } finally {
        redis.disconnect();
      }
    }
    if (this.schemas.size) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      try {
        await client.connect();
        for (const schema of this.schemas) await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
        this.schemas.clear();
      } catch (error) {
        console.error(`  could not drop schema(s) ${[...this.schemas].join(', ')}:`, error);
      } finally {
        await client.end().catch(() => {});
      }
    }
  }
}

/** Deletes every key `<prefix>:*` (SCAN, never KEYS, on a Redis others use). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  if (!/^bench-[0-9a-f]+$/.test(prefix)) throw new Error(`refusing to delete keys of prefix ${prefix}`);
  let deleted = 0;
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 2000);
    cursor = nextCursor;
    if (keys.length) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

// ---------------------------------------------------------------------------------
// The SMTP sink

export interface Sink {
  url: string;
  accepted: number;
  /** Bytes of the messages accepted (their DATA as the server reads it, dot-stuffing undone) since the last reset. */
  bytes: number;
  connections: number;
  /** performance.now() of each accepted message, by its first recipient (when tracking). */
  acceptedAt: Map<string, number>;
  track: boolean;
  /** Forgets counts and times (not open connections). */
  reset(): void;
  /** The mean size of the messages accepted since the last reset, in bytes (0 before any). */
  bytesPerMessage(): number;
  /** Resolves with the moment the `count`th message since the last reset was accepted. */
  waitFor(count: number, timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * A real SMTP server (npm smtp-server) on loopback that accepts everything as soon as the
 * message is read, parses nothing and counts. Like any smtp-server it waits 100 ms before
 * greeting a new connection; reverse DNS is off, as a local relay would have it.
 */
export async function startSink(): Promise<Sink> {
  let lastAt = 0;
  let waiters: Array<{ count: number; resolve: (at: number) => void }> = [];
  const sink = {
    accepted: 0,
    bytes: 0,
    connections: 0,
    acceptedAt: new Map<string, number>(),
    track: false,
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    disableReverseLookup: true,
    logger: false,
    onConnect(_session, callback) {
      sink.connections++;
      callback();
    },
    onData(stream, session, callback) {
      stream.on('data', (chunk: Buffer) => {
        sink.bytes += chunk.length;
      });
      stream.on('end', () => {
        const at = performance.now();
        sink.accepted++;
        lastAt = at;
        if (sink.track) {
          const to = session.envelope.rcptTo[0]?.address;
          if (to !== undefined && !sink.acceptedAt.has(to)) sink.acceptedAt.set(to, at);
        }
        callback();
        if (waiters.length) {
          const due = waiters.filter((waiter) => sink.accepted >= waiter.count);
          waiters = waiters.filter((waiter) => sink.accepted < waiter.count);
          for (const waiter of due) waiter.resolve(at);
        }
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `smtp://127.0.0.1:${port}`,
    bytesPerMessage() {
      return sink.accepted ? Math.round(sink.bytes / sink.accepted) : 0;
    },
    reset() {
      sink.accepted = 0;
      sink.bytes = 0;
      sink.acceptedAt.clear();
      waiters = [];
    },
    waitFor(count: number, timeoutMs: number) {
      if (sink.accepted >= count) return Promise.resolve(lastAt);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the SMTP sink accepted ${sink.accepted} of ${count} messages within ${timeoutMs / 1000} s`)), timeoutMs);
        waiters.push({
          count,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
