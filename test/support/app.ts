import { randomBytes } from 'node:crypto';
import { loadConfig } from '@notify/config';
import { createLogger } from '@notify/observability';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../apps/api/src/app';
import { createRedis } from '@notify/queues';
import { createDeps, type AppDeps } from '../../apps/api/src/deps';
import { createTestDatabase, DATABASE_URL, REDIS_URL } from './database';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const INGEST_TOKEN = 'test-ingest-token-0123456789';

export interface TestOrg {
  id: string;
  key: string;
  keyId: string;
  members: Array<{ team_member_uuid: string; email: string }>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  deps: AppDeps;
  admin(method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  /** An organization with a key and `memberCount` members, made through the operator API. */
  createOrg(options?: { memberCount?: number; plan?: Record<string, unknown>; timezone?: string; name?: string }): Promise<TestOrg>;
  api(key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Adds routes (e.g. a quota-counted probe) before the app is sealed. */
  beforeReady?: (app: FastifyInstance) => void;
  /** Shares another test app's database instead of migrating a new schema. */
  db?: Awaited<ReturnType<typeof createTestDatabase>>;
}

export async function startTestApp(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestApp> {
  const ownsDatabase = options.db === undefined;
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL,
    REDIS_URL,
    ADMIN_TOKEN,
    INGEST_TOKEN,
    LOG_LEVEL: 'silent',
    DOCS_URL: 'https://docs.example.test/notification-rules',
    QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
    ...env,
  });
  const redis = createRedis(REDIS_URL, 'notify-test');
  const deps = createDeps(config, { db, redis, logger: createLogger({ level: config.logLevel }) });
  const { app } = await buildApp(deps);
  options.beforeReady?.(app);
  await app.ready();

  const admin: TestApp['admin'] = (method, url, payload) =>
    app.inject({ method, url, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const api: TestApp['api'] = (key, method, url, payload) =>
    app.inject({ method, url, payload: payload as never, headers: { apikey: key } });

  let orgCounter = 0;
  const createOrg: TestApp['createOrg'] = async (options = {}) => {
    orgCounter++;
    const plan = { rate_limit_per_second: 10_000, rate_limit_per_minute: 100_000, ...options.plan };
    const org = await admin('POST', '/admin/v1/organizations', { name: options.name ?? `Org ${orgCounter}`, timezone: options.timezone, plan });
    if (org.statusCode !== 201) throw new Error(`could not create organization: ${org.body}`);
    const id = org.json().id as string;
    const members = [];
    for (let i = 0; i < (options.memberCount ?? 2); i++) {
      const member = await admin('POST', `/admin/v1/organizations/${id}/members`, { email: `member${i}@org${orgCounter}.example.com`, name: `Member ${i}` });
      if (member.statusCode !== 201) throw new Error(`could not add member: ${member.body}`);
      const { team_member_uuid, email } = member.json();
      members.push({ team_member_uuid, email });
    }
    const key = await admin('POST', `/admin/v1/organizations/${id}/api-keys`, { name: 'default' });
    if (key.statusCode !== 201) throw new Error(`could not create key: ${key.body}`);
    return { id, key: key.json().key, keyId: key.json().id, members };
  };

  return {
    app,
    db,
    deps,
    admin,
    api,
    createOrg,
    async close() {
      await app.close();
      redis.disconnect();
      if (ownsDatabase) await db.drop();
    },
  };
}
