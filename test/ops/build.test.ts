/**
 * The production path: `npm run build`, then the built server under plain node (no TypeScript
 * loader, no @notify/source condition: Node 20 cannot load a .ts file, so everything it runs is the
 * build) with NODE_ENV=production, against a schema it migrates itself. It becomes ready, serves the
 * API, delivers an e-mail end to end, serves the console's assets, and stops on SIGTERM. The CLI
 * runs from the build too.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN, INGEST_TOKEN } from '../support/app';
import { DATABASE_URL, REDIS_URL } from '../support/database';
import { makeEvent } from '../support/pipeline';
import { spawnServer, type ServerProcess } from '../support/processes';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the built program (npm run build, then node)', () => {
  let smtp: TestSmtpServer;
  let server: ServerProcess | undefined;
  // Not migrated beforehand: the built server must find the migrations itself. The name's
  // timestamp lets the global setup clear it should this run die before dropping it.
  const schema = `test_${Date.now().toString(36)}_build_${randomBytes(3).toString('hex')}`;
  let env: Record<string, string>;
  let baseUrl: string;

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  };
  const admin = (method: string, path: string, body?: unknown) => call(method, path, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);

  beforeAll(async () => {
    // The real build, type check included: what NODE_ENV=production npm start runs first.
    await run(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, timeout: 280_000 });
    smtp = await startSmtpServer();
    env = {
      NODE_ENV: 'production',
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL,
      QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
      SMTP_URL: smtp.url,
      ADMIN_TOKEN,
      INGEST_TOKEN,
      LOG_LEVEL: 'info',
    };
  }, 300_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.kill();
    await smtp?.close();
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  it('builds every app and package to dist/ with source maps, assets included', () => {
    for (const file of [
      'apps/server/dist/main.js',
      'apps/server/dist/main.js.map',
      'apps/cli/dist/main.js',
      'apps/api/dist/routes/admin/console-assets/console.html',
      'packages/db/dist/generated/prisma/client.js',
      'packages/core/dist/index.js',
    ]) {
      expect(existsSync(`${ROOT}/${file}`), file).toBe(true);
    }
  });

  it('names the TypeScript sources in stack traces (source maps)', async () => {
    const script = "import { loadConfig } from '@notify/config'; try { loadConfig(); } catch (error) { console.log(error.stack); }";
    const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: 'not-a-port' },
    });
    expect(stdout).toContain('PORT');
    // Resolved to the build (no @notify/source condition), mapped back to the source's line.
    expect(stdout).toMatch(/at loadConfig \(.*packages\/config\/src\/config\.ts:\d+:\d+\)/);
  });

  it('starts with NODE_ENV=production, becomes ready, serves the API and delivers an e-mail, and stops on SIGTERM', async () => {
    const started = Date.now();
    server = await spawnServer(env, { entry: 'build', startTimeoutMs: 60_000 });
    baseUrl = server.baseUrl!;
    for (;;) {
      if ((await fetch(`${baseUrl}/health/ready`).catch(() => null))?.status === 200) break;
      if (Date.now() - started > 60_000) throw new Error(`never ready: ${server.stderr()}`);
      await sleep(100);
    }
    // It migrated the empty schema: the migrations were found from the build.
    expect(server.lines.some((line) => String(line.msg).startsWith('Applied migration'))).toBe(true);

    const org = (await admin('POST', '/admin/v1/organizations', { name: 'Built', timezone: 'Europe/Berlin' })).json();
    const member = (await admin('POST', `/admin/v1/organizations/${org.id}/members`, { email: 'soc@built.example' })).json();
    const key = (await admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'integration' })).json().key as string;
    const rule = await call('POST', '/v1/platform/notification-rules', { apikey: key }, {
      name: 'RDP', scope: 'new_open_port_detected', frequency: 'instant', members: [member.team_member_uuid],
    });
    expect(rule.status, rule.text).toBe(201);
    const ingest = await call('POST', '/v1/ingest/events', { authorization: `Bearer ${INGEST_TOKEN}` }, { events: [makeEvent(org.id)] });
    expect(ingest.status, ingest.text).toBe(202);
    const [mail] = await smtp.waitFor(1, 20_000);
    expect(mail!.to).toEqual(['soc@built.example']);
    expect(mail!.html).toContain('mail.example.com');

    // Files read beside the code (the console's stylesheet), and the public document.
    const css = await fetch(`${baseUrl}/admin/assets/console.css`);
    expect(css.status).toBe(200);
    expect(await css.text()).toContain('{');
    expect((await call('GET', '/openapi.json', {})).json().openapi).toBe('3.1.0');

    expect(await server.stop()).toBe(0);
    expect(server.lines.some((line) => line.msg === 'stopped')).toBe(true);
  });

  it('runs the CLI from the build, and through its bin (npx notify)', async () => {
    const cliEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL, DATABASE_SCHEMA: schema, REDIS_URL, NODE_ENV: 'production' };
    const built = await run(process.execPath, ['apps/cli/dist/main.js', 'org', 'list'], { cwd: ROOT, env: cliEnv });
    expect(JSON.parse(built.stdout).map((org: { name: string }) => org.name)).toEqual(['Built']);
    const bin = await run(process.execPath, ['apps/cli/bin/notify.mjs', 'org', 'list'], { cwd: ROOT, env: cliEnv });
    expect(bin.stdout).toBe(built.stdout);
  });
});
