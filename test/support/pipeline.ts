import { randomBytes } from 'node:crypto';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '@notify/mail/testing';
import type { FastPathName } from '@notify/config';
import { startProcess, type RunningProcess } from '../../apps/server/src/process';
import { ADMIN_TOKEN, GENEROUS_AUTH_BUDGETS, INGEST_TOKEN } from './app';
import { createTestDatabase, DATABASE_URL, REDIS_URL } from './database';
import { waitUntilSettled } from './wait';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, vi } from 'vitest';

/**
 * Whether a fast path is on in this run of the suite (FAST_PATHS, as the harness passes it on): a
 * test of the fast path itself runs only where it is on.
 */
export function fastPathOn(name: FastPathName): boolean {
  const setting = process.env.FAST_PATHS ?? 'all';
  return setting === 'all' || setting.split(',').map((part) => part.trim()).includes(name);
}

export interface PipelineHarness {
  process: RunningProcess;
  queuePrefix: string;
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  admin(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  api(key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  ingest(payload: unknown): Promise<LightMyRequestResponse>;
  /** An organization with `memberCount` members and a key. */
  createOrg(options?: { memberCount?: number; timezone?: string; name?: string }): Promise<{ id: string; key: string; members: Array<{ team_member_uuid: string; email: string }> }>;
  /** Creates a rule and waits until the match stage's rule index has it. */
  createRule(key: string, body: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>>;
  waitForIndex(ruleId: string, present: boolean): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The whole service in this test process (api, match, schedule, deliver, send) on a
 * database schema and queue prefix of its own, sending to the given SMTP server,
 * with short intervals so tests run fast.
 */
export interface PipelineOptions {
  /** Share another harness's database (a second process of the same deployment). */
  db?: Awaited<ReturnType<typeof createTestDatabase>>;
  queuePrefix?: string;
  now?: () => Date;
  /** Where the process's log lines go (tests read them); LOG_LEVEL in `env` sets how many. */
  logDestination?: { write(line: string): void };
}

export async function startPipeline(smtp: TestSmtpServer, env: Record<string, string> = {}, options: PipelineOptions = {}): Promise<PipelineHarness> {
  const ownsDatabase = options.db === undefined;
  const db = options.db ?? (await createTestDatabase());
  const queuePrefix = options.queuePrefix ?? `test-${randomBytes(4).toString('hex')}`;
  const url = new URL(DATABASE_URL);
  const process = await startProcess({
    listen: false,
    now: options.now,
    logDestination: options.logDestination,
    env: {
      DATABASE_URL,
      DATABASE_SCHEMA: db.schema,
      REDIS_URL,
      QUEUE_PREFIX: queuePrefix,
      ADMIN_TOKEN,
      INGEST_TOKEN,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Security Alerts <alerts@notify.test>',
      LOG_LEVEL: 'silent',
      INSTANT_COALESCE_MS: '1000',
      SCHEDULER_TICK_MS: '100',
      RECONCILE_INTERVAL_MS: '1000',
      MAIL_BACKOFF_MS: '50',
      MAIL_ATTEMPTS: '6',
      DOCS_URL: `http://${url.host}/docs`,
      // The suite runs once with the fast paths on (the default) and once with them off.
      ...(globalThis.process.env.FAST_PATHS && { FAST_PATHS: globalThis.process.env.FAST_PATHS }),
      ...GENEROUS_AUTH_BUDGETS,
      ...env,
    },
  });
  const app = process.app!;
  const admin: PipelineHarness['admin'] = (method, path, payload) =>
    app.inject({ method, url: path, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const api: PipelineHarness['api'] = (key, method, path, payload) => app.inject({ method, url: path, payload: payload as never, headers: { apikey: key } });
  const ingest: PipelineHarness['ingest'] = (payload) =>
    app.inject({ method: 'POST', url: '/v1/ingest/events', payload: payload as never, headers: { authorization: `Bearer ${INGEST_TOKEN}` } });

  let orgs = 0;
  // Harnesses may share one SMTP server: their members' addresses must differ.
  const tag = randomBytes(3).toString('hex');
  const harness: PipelineHarness = {
    process,
    queuePrefix,
    db,
    admin,
    api,
    ingest,
    async createOrg(options = {}) {
      orgs++;
      const org = await admin('POST', '/admin/v1/organizations', {
        name: options.name ?? `Org ${orgs}`,
        timezone: options.timezone,
        plan: { rate_limit_per_second: 10_000, rate_limit_per_minute: 100_000 },
      });
      if (org.statusCode !== 201) throw new Error(org.body);
      const id = org.json().id as string;
      const members = [];
      for (let i = 0; i < (options.memberCount ?? 1); i++) {
        const member = await admin('POST', `/admin/v1/organizations/${id}/members`, { email: `member${i}@org${orgs}-${tag}.example.com` });
        if (member.statusCode !== 201) throw new Error(member.body);
        members.push({ team_member_uuid: member.json().team_member_uuid as string, email: member.json().email as string });
      }
      const key = await admin('POST', `/admin/v1/organizations/${id}/api-keys`, { name: 'default' });
      return { id, key: key.json().key as string, members };
    },
    async createRule(key, body) {
      const response = await api(key, 'POST', '/v1/platform/notification-rules', body);
      if (response.statusCode !== 201) throw new Error(response.body);
      const rule = response.json();
      await harness.waitForIndex(rule.id, rule.enabled !== false);
      return rule;
    },
    async waitForIndex(ruleId, present) {
      if (!process.runtime.roles.includes('match')) return;
      // vi.waitFor rather than expect.poll: rules are also made in beforeAll, where expect.poll refuses to run.
      await vi.waitFor(() => expect(process.runtime.pipeline.match!.index.has(ruleId), `rule ${ruleId} ${present ? 'in' : 'out of'} the match stage's rule index`).toBe(present), {
        timeout: 5000,
        interval: 10,
      });
    },
    async stop() {
      await process.stop();
      if (ownsDatabase) await db.drop();
    },
  };
  return harness;
}

let eventCounter = 0;
/** A valid event for `organizationId`, with overridable fields. */
export function makeEvent(organizationId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  eventCounter++;
  return {
    id: `evt-${Date.now()}-${eventCounter}-${randomBytes(3).toString('hex')}`,
    organization_id: organizationId,
    scope: 'new_open_port_detected',
    occurred_at: new Date().toISOString(),
    asset: 'mail.example.com',
    asset_type: 'subdomain',
    severity: 'high',
    tags: ['production'],
    title: 'Port 3389 (RDP) open on mail.example.com',
    summary: 'RDP is reachable from the internet.',
    url: 'https://platform.example.com/findings/1',
    data: { port: 3389, service: 'rdp' },
    ...overrides,
  };
}

/** The SMTP server and the pipeline a test file's `describe` shares. */
export interface PipelineFixture {
  smtp: TestSmtpServer;
  p: PipelineHarness;
}

/**
 * Starts a real SMTP server and the whole pipeline before the enclosing `describe`'s tests and
 * stops both after them; the fields are filled in by the time a test runs.
 */
/** The e-mails the SMTP server accepted for `email`, in order. */
export function mailsFor(smtp: TestSmtpServer, email: string): ReceivedMail[] {
  return smtp.received.filter((mail) => mail.to.includes(email));
}

/** Ingests events, expecting them accepted (202). */
export async function ingestAccepted(p: PipelineHarness, events: unknown[]): Promise<void> {
  const response = await p.ingest({ events });
  expect(response.statusCode, response.body).toBe(202);
}

/** Flushes a rule once the pipeline has settled, and waits until what it sends has settled too; returns the flush's counts. */
export async function flushSettled(p: PipelineHarness, ruleId: string): Promise<{ matches: number; deliveries: number }> {
  await waitUntilSettled(p.db);
  const response = await p.admin('POST', `/admin/v1/notification-rules/${ruleId}/flush`);
  expect(response.statusCode).toBe(202);
  await waitUntilSettled(p.db);
  return response.json() as { matches: number; deliveries: number };
}

export function usePipeline(env: Record<string, string> = {}, options: PipelineOptions = {}): PipelineFixture {
  const fixture = {} as PipelineFixture;
  beforeAll(async () => {
    fixture.smtp = await startSmtpServer();
    fixture.p = await startPipeline(fixture.smtp, env, options);
  });
  afterAll(async () => {
    await fixture.p?.stop();
    await fixture.smtp?.close();
  });
  return fixture;
}
