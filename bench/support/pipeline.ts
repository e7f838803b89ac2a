// What the parts of `npm run bench:pipeline` share: the service's settings they start it with,
// a fresh migrated schema, Redis connections and children they release, and a JSON POST.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { DATABASE_URL, REDIS_URL } from './common';
import { createDatabase, migrate, type Database } from './notify';
import type { Child, Resources } from './processes';

export const INGEST_TOKEN = randomBytes(24).toString('hex');
export const ADMIN_TOKEN = randomBytes(24).toString('hex');
export const MAIL_FROM = 'Security Alerts <alerts@notify.bench>';

export function processEnv(schema: string, prefix: string, extra: Record<string, string>): Record<string, string> {
  return {
    BENCH_CHILD_MODE: 'process',
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    HOST: '127.0.0.1',
    PORT: '0',
    INGEST_TOKEN,
    ADMIN_TOKEN,
    MAIL_FROM,
    SMTP_URL: '',
    ...extra,
  };
}

export async function newSchema(res: Resources, poolSize = 4): Promise<{ schema: string; db: Database }> {
  const schema = res.schema();
  await migrate({ url: DATABASE_URL, schema });
  const db = createDatabase({ url: DATABASE_URL, schema, poolSize });
  res.onRelease(() => db.close());
  return { schema, db };
}

export function newRedis(res: Resources, name: string): Redis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null, connectionName: name });
  res.onRelease(async () => redis.disconnect());
  return redis;
}

export async function stopChild(res: Resources, child: Child): Promise<void> {
  await child.stop();
  res.children.delete(child);
}

/**
 * The bench's HTTP client: node:http over kept-alive connections. undici's fetch, which it used
 * before, cost the bench's process about 0.1 ms more CPU a request, CPU the service under test
 * then did not have (the digests part, alternated: 0.97 / 0.94 → 0.86 / 0.84 s per 1,000 e-mails
 * for the sink and the flush requests together, the sink alone 0.4–0.6 in the raw runs).
 */
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

export function postJson(url: string, token: string, body: string | undefined): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const req = request(url, { method: 'POST', headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = response.statusCode ?? 0;
        try {
          resolve({ status, json: JSON.parse(text) as Record<string, unknown> });
        } catch {
          resolve({ status, json: { body: text.slice(0, 500) } });
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The deliveries of a part's schema by status, how many there are and how many were sent. */
export async function deliveryCounts(db: Database): Promise<{ byStatus: Record<string, number>; created: number; sent: number }> {
  const { rows } = await db.pool.query<{ status: string; n: number }>('SELECT status::text, count(*)::int AS n FROM deliveries GROUP BY 1');
  const byStatus = Object.fromEntries(rows.map((row) => [row.status, row.n]));
  return { byStatus, created: rows.reduce((sum, row) => sum + row.n, 0), sent: byStatus.sent ?? 0 };
}

/** When the sink accepted what `accepted` waits for, or now and timedOut when it gave up (logged). */
export async function acceptedOrTimedOut(accepted: Promise<number>, log: (message: string) => void): Promise<{ end: number; timedOut: boolean }> {
  try {
    return { end: await accepted, timedOut: false };
  } catch (error) {
    log((error as Error).message);
    return { end: performance.now(), timedOut: true };
  }
}
