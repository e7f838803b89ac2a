import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger, maskUrlPassword } from '@notify/observability';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN, INGEST_TOKEN } from '../support/app';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';

const SMTP_PASSWORD = 'Sm7p-pa55w0rd-xq9';
const METRICS_TOKEN = 'test-metrics-token-9876543210-abcdef';

type Line = Record<string, unknown> & { msg?: string };

/** A pino destination that keeps every line, raw and parsed. */
function captureLines() {
  const raw: string[] = [];
  return {
    raw,
    write(line: string) {
      raw.push(line);
    },
    get lines(): Line[] {
      return raw.map((line) => JSON.parse(line) as Line);
    },
    get text(): string {
      return raw.join('');
    },
  };
}

describe('log lines: JSON, redacted, each naming its request or job', () => {
  const capture = captureLines();
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  const secrets: string[] = [ADMIN_TOKEN, INGEST_TOKEN, SMTP_PASSWORD, METRICS_TOKEN];
  let requestId = '';

  beforeAll(async () => {
    // An SMTP server that insists on a password.
    smtp = await startSmtpServer({ auth: { user: 'mailer', password: SMTP_PASSWORD } });
    p = await startPipeline(smtp, { LOG_LEVEL: 'trace', METRICS_TOKEN }, { logDestination: capture });

    // An admin call with the bearer token, generating a key (returned once, in the body).
    const org = await p.createOrg();
    secrets.push(org.key);
    const member = org.members[0]!;
    // Calls with the apikey header: a good key, and a wrong one of the right shape.
    await p.createRule(org.key, { name: 'Logged', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const listed = await p.api(org.key, 'GET', '/v1/platform/notification-rules');
    requestId = listed.headers['service-request-id'] as string;
    const wrongKey = 'A'.repeat(32);
    secrets.push(wrongKey);
    expect((await p.api(wrongKey, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(401);
    // A wrong admin token is a secret too, and so is a scrape's token.
    const wrongAdmin = 'wrong-admin-token-5647382910';
    secrets.push(wrongAdmin);
    await p.process.app!.inject({ method: 'GET', url: '/admin/v1/organizations', headers: { authorization: `Bearer ${wrongAdmin}` } });
    await p.process.app!.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    // Ingest with the bearer token, through to an e-mail over authenticated SMTP.
    expect((await p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    // vi.waitFor, since expect.poll refuses to run in beforeAll.
    await vi.waitFor(() => expect(capture.lines.some((line) => line.msg === 'e-mail sent'), 'an e-mail sent').toBe(true), { timeout: 10_000, interval: 25 });
    expect(smtp.received).toHaveLength(1);
    // The process made and sent that e-mail without a job; a send job asked for it again (as the
    // reconciler would) finds it sent.
    const sentId = capture.lines.find((line) => line.msg === 'e-mail sent')!.delivery_id as string;
    await p.process.deps.queues.requestSend([sentId], { replaceFinished: true });
    await vi.waitFor(() => expect(capture.lines.some((line) => line.msg === 'job completed' && line.job_id === `send.${sentId}`), 'the send job').toBe(true), { timeout: 10_000, interval: 25 });
    expect(smtp.received).toHaveLength(1);

    // Code that logs carelessly: headers, the whole configuration, an error naming the SMTP URL.
    const log = p.process.deps.logger;
    log.info({ headers: { apikey: org.key, authorization: `Bearer ${ADMIN_TOKEN}` } }, 'careless headers');
    log.info({ req: { headers: { apikey: org.key, authorization: `Bearer ${INGEST_TOKEN}` } } }, 'careless request');
    log.info({ config: p.process.config }, 'careless configuration');
    log.warn({ err: new Error(`could not connect to ${p.process.config.mail.smtpUrl}`) }, `SMTP trouble at ${p.process.config.mail.smtpUrl}`);
    log.info({ key: org.key, token: INGEST_TOKEN, password: SMTP_PASSWORD }, 'careless fields');
  });
  afterAll(async () => {
    await p.stop();
    await smtp.close();
  });

  it('writes one JSON object per line', () => {
    expect(capture.raw.length).toBeGreaterThan(20);
    for (const line of capture.raw) {
      expect(line.endsWith('\n')).toBe(true);
      expect(() => JSON.parse(line)).not.toThrow();
    }
  });

  it('never writes an API key, a token or the SMTP password', () => {
    const text = capture.text;
    for (const secret of secrets) expect(text, `a log line contains ${secret.slice(0, 6)}…`).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });

  it('logs the SMTP URL with its password masked', () => {
    const started = capture.lines.find((line) => line.msg === 'send role started');
    expect(started).toMatchObject({ transport: 'smtp', smtp: expect.stringMatching(/^smtp:\/\/mailer:\*\*\*@127\.0\.0\.1:\d+\?tls=optional$/) });
    const trouble = capture.lines.find((line) => line.msg?.startsWith('SMTP trouble'));
    expect(trouble!.msg).toMatch(/smtp:\/\/mailer:\*\*\*@127\.0\.0\.1/);
    expect(JSON.stringify(trouble!.err)).toContain('mailer:***@');
    const config = capture.lines.find((line) => line.msg === 'careless configuration')!.config as Record<string, unknown>;
    expect(config.adminToken).toBe('[redacted]');
    expect(config.ingestTokens).toBe('[redacted]');
  });

  it('puts the request id on every line about a request', () => {
    // (The test's own careless lines above are not about a request.)
    const aboutRequests = capture.lines.filter((line) => ('req' in line || 'res' in line) && !line.msg?.startsWith('careless'));
    expect(aboutRequests.length).toBeGreaterThan(10);
    for (const line of aboutRequests) expect(line.request_id, JSON.stringify(line)).toEqual(expect.any(String));
    const ofOne = capture.lines.filter((line) => line.request_id === requestId);
    expect(ofOne.map((line) => line.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });

  it('puts the job id and queue on every line about a job, and says so of work done without one', () => {
    const sending = ['e-mail sent', 'e-mail skipped', 'e-mail cancelled'];
    const aboutJobs = capture.lines.filter((line) => 'job_id' in line || ['job started', 'job completed', 'events matched'].includes(line.msg ?? '') || (sending.includes(line.msg ?? '') && !line.in_process));
    for (const line of aboutJobs) {
      expect(line.job_id, JSON.stringify(line)).toEqual(expect.any(String));
      expect(line.queue, JSON.stringify(line)).toEqual(expect.any(String));
    }
    const sent = capture.lines.find((line) => line.msg === 'e-mail sent')!;
    expect(sent).toMatchObject({ in_process: true, stage: 'send', delivery_id: expect.any(String) });
    expect(sent).not.toHaveProperty('job_id');
    const skipped = capture.lines.find((line) => line.msg === 'e-mail skipped')!;
    expect(skipped).toMatchObject({ queue: 'send', job_id: `send.${sent.delivery_id as string}`, delivery_id: sent.delivery_id });
    expect(new Set(aboutJobs.map((line) => line.queue))).toContain('send');
  });
});

describe('the logger', () => {
  it('masks passwords of URLs and nothing else', () => {
    expect(maskUrlPassword('smtp://user:secret@mail.example.com:587')).toBe('smtp://user:***@mail.example.com:587');
    expect(maskUrlPassword('redis://:pw@127.0.0.1:6379/2 and postgresql://app:p%40ss@db/notify')).toBe('redis://:***@127.0.0.1:6379/2 and postgresql://app:***@db/notify');
    expect(maskUrlPassword('smtp://mail.example.com:587')).toBe('smtp://mail.example.com:587');
    expect(maskUrlPassword('mailto:someone@example.com, https://example.com/a@b')).toBe('mailto:someone@example.com, https://example.com/a@b');
  });

  it('masks passwords holding slashes and quotes, in raw text and in JSON lines', () => {
    expect(maskUrlPassword('smtp://user:pa/ss@mail.example.com:587')).toBe('smtp://user:***@mail.example.com:587');
    expect(maskUrlPassword('smtp://user:pa"ss@host and smtp://u:it\'s/a@host')).toBe('smtp://user:***@host and smtp://u:***@host');
    expect(maskUrlPassword('not a URL: smtp://user:pass word@host')).toBe('not a URL: smtp://user:pass word@host');
    const capture = captureLines();
    const logger = createLogger({ level: 'info', destination: capture });
    logger.error({ err: new Error('connect smtp://mailer:pa"ss/w0rd@mail.example.com:587 failed') }, 'bad url postgresql://app:a\\b"c@db/notify');
    logger.info({ url: 'https://example.com:8080/path', contact: 'bob@example.com', note: 'line\nbreak smtp://u:x\ny@h' }, 'no secret here');
    expect(capture.text).not.toContain('pa\\"ss');
    expect(capture.text).not.toContain('w0rd');
    expect(capture.text).not.toContain('a\\\\b');
    const [error, plain] = capture.lines;
    expect(error!.msg).toBe('bad url postgresql://app:***@db/notify');
    expect((error!.err as { message: string }).message).toBe('connect smtp://mailer:***@mail.example.com:587 failed');
    // A bare quote ends a JSON string, so a URL's port is not taken for a password reaching the next field's `@`.
    expect(plain).toMatchObject({ url: 'https://example.com:8080/path', contact: 'bob@example.com', note: 'line\nbreak smtp://u:x\ny@h' });
  });

  it('masks in time linear in the line, on the hostile a.a.a.…@ too', () => {
    const cpuMs = (text: string) => {
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        const start = process.cpuUsage();
        maskUrlPassword(text);
        const used = process.cpuUsage(start);
        best = Math.min(best, (used.user + used.system) / 1000);
      }
      return best;
    };
    const hostile = (size: number) => `${'a.'.repeat(size / 2)}@`;
    // A quadratic pattern takes 16 times as long for 4 times the length; a linear one about 4 times.
    // The bounds leave room for a busy machine.
    const small = cpuMs(hostile(16 * 1024));
    const large = cpuMs(hostile(64 * 1024));
    expect(large).toBeLessThan(50);
    expect(large).toBeLessThan(Math.max(small, 1) * 10);
    expect(maskUrlPassword(`x${hostile(64)}`)).toBe(`x${hostile(64)}`);
    expect(maskUrlPassword(`a:${'/'.repeat(64 * 1024)}`)).toBe(`a:${'/'.repeat(64 * 1024)}`);
  });

  it('takes its level from configuration', () => {
    const capture = captureLines();
    const logger = createLogger({ level: 'warn', destination: capture });
    logger.info('hidden');
    logger.warn('shown');
    expect(capture.lines.map((line) => line.msg)).toEqual(['shown']);
  });
});
