import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN } from '../support/app';
import { REDIS_URL } from '../support/database';
import { startPipeline, type PipelineHarness } from '../support/pipeline';
import { parsePrometheus, valueOf } from '../support/prometheus';
import { startRelay, throughRelay } from '../support/relay';


/** A relay to Redis that can be cut and restored: Redis going away, as the process sees it. */
async function startRedisRelay() {
  const target = new URL(REDIS_URL);
  const relay = await startRelay({ host: target.hostname, port: Number(target.port || 6379) });
  return Object.assign(relay, { url: throughRelay(REDIS_URL, relay) });
}

async function ready(p: PipelineHarness, token?: string) {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await p.process.app!.inject({ method: 'GET', url: '/health/ready', headers });
  return { status: response.statusCode, body: response.json() as { status: string; checks: Record<string, { status: string; error?: string }> } };
}

async function live(p: PipelineHarness): Promise<number> {
  return (await p.process.app!.inject({ method: 'GET', url: '/health/live' })).statusCode;
}

describe('readiness follows Redis', () => {
  let smtp: TestSmtpServer;
  let relay: Awaited<ReturnType<typeof startRedisRelay>>;
  let p: PipelineHarness;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    relay = await startRedisRelay();
    p = await startPipeline(smtp, { REDIS_URL: relay.url });
  });
  afterAll(async () => {
    await p.stop();
    await relay.close();
    await smtp.close();
  });

  it('is ready with every check of a process running every role', async () => {
    const { status, body } = await ready(p);
    expect(status).toBe(200);
    expect(body).toEqual({
      status: 'ok',
      checks: { database: { status: 'ok' }, redis: { status: 'ok' }, roles: { status: 'ok' }, smtp: { status: 'ok' } },
    });
  });

  it('is not ready while Redis is down, stays live, keeps answering /metrics, and is ready again when Redis is back', async () => {
    await relay.cut();
    const started = Date.now();
    const down = await ready(p);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('fail');
    // Anonymous: the failing check's name and status, nothing of the error (host, port, reason).
    expect(down.body.checks.redis).toEqual({ status: 'fail' });
    expect(down.body.checks.database!.status).toBe('ok');
    expect(await live(p)).toBe(200);

    // A scrape does not hang on Redis: queue depths are missing and say so.
    const scrapeStarted = Date.now();
    const scrape = await p.process.app!.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(scrape.statusCode).toBe(200);
    expect(Date.now() - scrapeStarted).toBeLessThan(3000);
    expect(valueOf(parsePrometheus(scrape.body), 'notify_queue_metrics_up')).toBe(0);

    await relay.restore();
    await expect.poll(() => ready(p), { interval: 100, message: 'ready again' }).toMatchObject({ status: 200 });
  });
});

describe('readiness follows the mail server', () => {
  let smtp: TestSmtpServer;
  let sink: TestSmtpServer;
  let outbox: string;
  const harnesses: PipelineHarness[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    sink = await startSmtpServer({ auth: { user: 'user', password: 'secret' } });
    outbox = await mkdtemp(join(tmpdir(), 'notify-outbox-'));
  });
  afterAll(async () => {
    await Promise.all(harnesses.map((harness) => harness.stop()));
    await Promise.all([smtp.close(), sink.close(), rm(outbox, { recursive: true, force: true })]);
  });

  async function start(env: Record<string, string>): Promise<PipelineHarness> {
    const harness = await startPipeline(smtp, env);
    harnesses.push(harness);
    return harness;
  }

  it('is not ready when the SMTP server cannot be reached, and stays live', async () => {
    // Nothing listens on port 1.
    const p = await start({ SMTP_URL: 'smtp://user:pass@127.0.0.1:1' });
    const { status, body } = await ready(p, ADMIN_TOKEN);
    expect(status).toBe(503);
    expect(body.checks.smtp!.status).toBe('fail');
    expect(body.checks.smtp!.error).toMatch(/ECONNREFUSED|connect/i);
    expect(body.checks.smtp!.error).not.toContain('pass@');
    expect(body.checks.database!.status).toBe('ok');
    expect(body.checks.redis!.status).toBe('ok');
    expect(await live(p)).toBe(200);
  });

  it('tells the public which check fails and nothing more; operators and the logs get the error', async () => {
    const lines: string[] = [];
    const p = await startPipeline(smtp, { SMTP_URL: 'smtp://user:pass@127.0.0.1:1', LOG_LEVEL: 'info' }, { logDestination: { write: (line) => void lines.push(line) } });
    harnesses.push(p);
    const anonymous = await p.process.app!.inject({ method: 'GET', url: '/health/ready' });
    expect(anonymous.statusCode).toBe(503);
    expect(anonymous.json()).toEqual({
      status: 'fail',
      checks: { database: { status: 'ok' }, redis: { status: 'ok' }, roles: { status: 'ok' }, smtp: { status: 'fail' } },
    });
    expect(anonymous.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|connect|:1\b/);
    // With the operator token: the error; with a wrong one: refused.
    expect((await ready(p, ADMIN_TOKEN)).body.checks.smtp!.error).toMatch(/ECONNREFUSED|connect/i);
    const wrong = await p.process.app!.inject({ method: 'GET', url: '/health/ready', headers: { authorization: 'Bearer not-the-admin-token-0123456789' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    // The logs name the error once, not once per probe, and never the password.
    await p.process.app!.inject({ method: 'GET', url: '/health/ready' });
    const failed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'readiness check failed');
    expect(failed).toEqual([expect.objectContaining({ check: 'smtp', error: expect.stringMatching(/ECONNREFUSED|connect/i) })]);
    expect(lines.join('')).not.toContain('pass@');
  });

  it('asks the SMTP server once per 10 s, not once per probe', async () => {
    const p = await start({ SMTP_URL: sink.url });
    const before = sink.connections;
    for (let i = 0; i < 5; i++) expect((await ready(p)).body.checks.smtp).toEqual({ status: 'ok' });
    expect(sink.connections - before).toBe(1);
  });

  it('without SMTP, is ready when the outbox folder is writable and not otherwise', async () => {
    const writable = await start({ SMTP_URL: '', OUTBOX_DIR: outbox });
    expect((await ready(writable)).body.checks).toEqual({ database: { status: 'ok' }, redis: { status: 'ok' }, roles: { status: 'ok' }, outbox: { status: 'ok' } });
    // A folder below a file can never be created.
    const file = join(outbox, 'a-file');
    await writeFile(file, '');
    const broken = await start({ SMTP_URL: '', OUTBOX_DIR: join(file, 'outbox') });
    const { status, body } = await ready(broken);
    expect(status).toBe(503);
    expect(body.checks.outbox!.status).toBe('fail');
  });

  it('has no mail check in a process without the send role', async () => {
    const p = await start({ ROLES: 'api,match', SMTP_URL: 'smtp://127.0.0.1:1' });
    const { status, body } = await ready(p);
    expect(status).toBe(200);
    expect(Object.keys(body.checks).sort()).toEqual(['database', 'redis', 'roles']);
  });
});
