import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromium, type Browser, type Dialog, type Page } from 'playwright-core';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN } from '../support/app';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';

/**
 * The operator's browser pages in Debian's Chromium, driven by playwright-core, against the
 * whole service (api, matcher, scheduler, mailer) on a real port and a real SMTP server.
 */

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) {
  console.warn(`SKIPPED test/browser/console.test.ts: ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it).`);
}

const KEY = /^[A-Za-z0-9]{32}$/;
const ORG_NAME = 'Acme <b>Security</b> & "Co"';

describe.skipIf(!HAS_CHROMIUM)('operator pages in a real browser', { timeout: 60_000 }, () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  let base: string;
  let browser: Browser;
  let page: Page;
  let org: { id: string; key: string; members: Array<{ team_member_uuid: string; email: string }> };
  let rule: { id: string };
  /** Each member's failed delivery: the first is retried in the console, the second on the dashboard. */
  let failed: Array<{ email: string; id: string }>;
  const refused = new Set<string>();
  const problems: string[] = [];
  /** The error answers the tests provoke on purpose: the wrong token, the default key's deletion. */
  const expectedErrors: Array<[number, string]> = [[401, '/admin/login'], [409, '/admin/v1/organizations/']];

  /** The probe's first defined answer (vi.waitFor, since beforeAll uses it too, where expect.poll refuses to run). */
  async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
    return vi.waitFor(
      async () => {
        const value = await probe();
        if (value === undefined) throw new Error(`timed out waiting for ${what}`);
        return value;
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }

  beforeAll(async () => {
    smtp = await startSmtpServer();
    p = await startPipeline(smtp);
    await p.process.app!.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.process.app!.server.address() as AddressInfo).port}`;

    // An organization whose name is markup, a spare key, and a rule whose e-mails the SMTP server refuses for good.
    // Their first attempt, made by the process that made them, is answered "try again later": the
    // retry is a send job of each one's own (send.<delivery>), which the refusal fails for the dashboard.
    org = await p.createOrg({ name: ORG_NAME, memberCount: 2 });
    const spare = await p.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'spare' });
    expect(spare.statusCode).toBe(201);
    for (const member of org.members) refused.add(member.email);
    smtp.setVerdict(({ to, attempt }) => {
      if (!to.some((address) => refused.has(address))) return 'accept';
      return attempt === 1 ? { code: 451, message: 'Try again later' } : { code: 550, message: 'No such user' };
    });
    rule = await p.createRule(org.key, { name: 'RDP exposed', scope: 'new_open_port_detected', members: org.members.map((member) => member.team_member_uuid) });
    expect((await p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    failed = await waitFor('two failed deliveries', async () => {
      const { rows } = await p.db.pool.query<{ id: string; email: string }>(
        `SELECT id, email FROM deliveries WHERE rule_id = $1 AND status = 'failed' ORDER BY email`,
        [rule.id],
      );
      return rows.length === 2 ? rows : undefined;
    });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    // Any script error or blocked resource on our pages is a failure of the page.
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Answers of 400 and above are checked below, by address.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !expectedErrors.some(([status, path]) => response.status() === status && new URL(response.url()).pathname.startsWith(path))) {
        problems.push(`HTTP ${response.status()} ${response.request().method()} ${response.url()}`);
      }
    });
    page.on('requestfailed', (request) => {
      // ERR_ABORTED: a navigation cut the page's own loads short, not a failure.
      if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await p?.stop();
    await smtp?.close();
  });

  it('sends an anonymous visitor to the login, refuses a wrong token, and logs in with the right one', async () => {
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expectText(page.getByRole('alert'), 'That token is not right.');
    expect((await page.context().cookies()).filter((cookie) => cookie.name === 'notify_admin_session')).toEqual([]);

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}/admin/queues`);
    const [session] = (await page.context().cookies()).filter((cookie) => cookie.name === 'notify_admin_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
  });

  it('shows every queue on the dashboard, with the failed send job', async () => {
    for (const name of ['match.new_open_port_detected', 'match.asset_ssl_changed', 'deliver', 'send']) {
      await page.getByText(name, { exact: true }).first().waitFor();
    }
    await page.goto(`${base}/admin/queues/queue/send?status=failed`);
    await page.getByText('No such user').first().waitFor();
    expect(problems).toEqual([]);
  });

  it('opens the console and the organization, its name shown as text', async () => {
    await page.goto(`${base}/admin/console`);
    await page.getByRole('link', { name: `Open organization ${ORG_NAME}` }).click();
    await expectText(page.locator('#org-title'), ORG_NAME);
    expect(await page.locator('main b').count()).toBe(0);
    for (const member of org.members) await page.getByRole('cell', { name: member.email, exact: true }).waitFor();
    await page.getByRole('cell', { name: 'spare', exact: true }).waitFor();
  });

  it('adds and removes a member', async () => {
    await page.locator('#member-add').getByLabel('E-mail').fill('oncall@acme.example');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('cell', { name: 'oncall@acme.example', exact: true }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove member oncall@acme.example' }).click();
    await page.getByRole('cell', { name: 'oncall@acme.example', exact: true }).waitFor({ state: 'detached' });
    const members = (await p.admin('GET', `/admin/v1/organizations/${org.id}/members`)).json() as Array<{ email: string }>;
    expect(members.map((member) => member.email).sort()).toEqual(org.members.map((member) => member.email).sort());
  });

  it("shows a bouncing address with the server's reply, and clears it", async () => {
    // A member's address refused at RCPT TO is marked so (test/e2e/bounces.test.ts); here the mark is set directly.
    const bouncing = org.members[0]!;
    await p.db.pool.query(`UPDATE team_members SET bouncing_since = now(), bounce_reply = '550 5.1.1 user unknown' WHERE id = $1`, [bouncing.team_member_uuid]);
    await page.reload();
    await page.getByRole('cell', { name: bouncing.email, exact: true }).waitFor();
    const row = page.getByRole('row').filter({ hasText: bouncing.email });
    await expect(row.getByRole('cell', { name: /^Bouncing since / }).getAttribute('title')).resolves.toBe('550 5.1.1 user unknown');
    await row.getByRole('button', { name: `Clear the bounce of ${bouncing.email}` }).click();
    await row.getByRole('cell', { name: 'OK', exact: true }).waitFor();
    const members = (await p.admin('GET', `/admin/v1/organizations/${org.id}/members`)).json() as Array<{ email: string; bouncing: unknown }>;
    expect(members.find((member) => member.email === bouncing.email)!.bouncing).toBeNull();
    expect(problems).toEqual([]);
  });

  it("sets a member's time zone and quiet hours, shown in the Clock column", async () => {
    const member = org.members[1]!;
    const row = page.getByRole('row').filter({ hasText: member.email });
    await row.getByRole('cell', { name: "organization's zone", exact: true }).waitFor();
    const answers = ['Asia/Tokyo', '22-7'];
    const answer = (dialog: Dialog) => void dialog.accept(answers.shift());
    page.on('dialog', answer);
    await row.getByRole('button', { name: `Set the clock of ${member.email}` }).click();
    await row.getByRole('cell', { name: 'Asia/Tokyo · quiet 22–7', exact: true }).waitFor();
    page.off('dialog', answer);
    const members = (await p.admin('GET', `/admin/v1/organizations/${org.id}/members`)).json() as Array<{ email: string; timezone: string; quiet_hours: unknown }>;
    expect(members.find((m) => m.email === member.email)).toMatchObject({ timezone: 'Asia/Tokyo', quiet_hours: { start_hour: 22, end_hour: 7 } });

    // A zone PostgreSQL and ICU do not know: the API's message, shown as the console shows errors.
    const wrong = ['Mars/Olympus', ''];
    const refuse = (dialog: Dialog) => void dialog.accept(wrong.shift());
    page.on('dialog', refuse);
    await row.getByRole('button', { name: `Set the clock of ${member.email}` }).click();
    await page.getByText('"Mars/Olympus" is not a valid time zone', { exact: false }).first().waitFor();
    page.off('dialog', refuse);
    expect(problems.filter((problem) => !problem.includes('400'))).toEqual([]);
    problems.length = 0;
  });

  it('generates a key and shows it once, with a warning', async () => {
    await page.locator('#key-generate').getByLabel('Key name').fill('ci pipeline');
    await page.getByRole('button', { name: 'Generate key' }).click();
    const key = (await page.locator('#new-key-value').textContent()) ?? '';
    expect(key).toMatch(KEY);
    await expectText(page.locator('#new-key'), 'shown this once');
    // The key works at once.
    expect((await p.api(key, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(key);
    await page.reload();
    await page.getByRole('cell', { name: 'ci pipeline', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
  });

  it('deletes a key that is not the default', async () => {
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete key spare', exact: true }).click();
    await page.getByRole('cell', { name: 'spare', exact: true }).waitFor({ state: 'detached' });
    const keys = (await p.admin('GET', `/admin/v1/organizations/${org.id}/api-keys`)).json() as Array<{ name: string }>;
    expect(keys.map((key) => key.name).sort()).toEqual(['ci pipeline', 'default']);
  });

  it('fails to delete the default key, showing the API\'s answer, and keeps it', async () => {
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete key default', exact: true }).click();
    await expectText(page.locator('#error'), 'Error 409: The default API key cannot be deleted. Make another key the default first.');
    await page.getByRole('cell', { name: 'default', exact: true }).first().waitFor();
    expect((await p.api(org.key, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(200);
  });

  it('renames a key and makes it the default; then the old default can go', async () => {
    await page.getByRole('button', { name: 'Rename key ci pipeline' }).click();
    await page.getByLabel('New name for key ci pipeline').fill('ci');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Make key ci the default' }).click();
    await page.getByRole('button', { name: 'Make key default the default' }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete key default', exact: true }).click();
    await page.getByRole('button', { name: 'Delete key default', exact: true }).waitFor({ state: 'detached' });
    const keys = (await p.admin('GET', `/admin/v1/organizations/${org.id}/api-keys`)).json() as Array<{ name: string; is_default: boolean }>;
    expect(keys).toEqual([expect.objectContaining({ name: 'ci', is_default: true })]);
    expect((await p.api(org.key, 'GET', '/v1/platform/notification-rules')).statusCode).toBe(401);
  });

  it('shows a rule\'s failed deliveries with their error, and retries one', async () => {
    const { email, id } = failed[0]!;
    await expectText(page.locator('#rules'), '2 failed');
    await page.getByRole('button', { name: 'Deliveries of rule RDP exposed' }).click();
    const row = page.locator(`tr[data-delivery-id="${id}"]`);
    await expectText(row, 'failed');
    await expectText(row, '550');
    refused.delete(email);
    await page.getByRole('button', { name: `Retry delivery to ${email}` }).click();
    await waitFor('the retried e-mail', async () => (smtp.received.some((mail) => mail.to.includes(email)) ? true : undefined));
    await waitFor('the delivery to be sent', async () => {
      await page.getByRole('button', { name: 'Deliveries of rule RDP exposed' }).click();
      return (await row.textContent())?.includes('sent') ? true : undefined;
    });
    await expectText(page.locator('#rules'), '1 failed');
    expect(problems).toEqual([]);
  });

  it('retries the failed send job on the dashboard: the e-mail still owed goes out', async () => {
    const { email, id } = failed[1]!;
    refused.delete(email);
    await page.getByRole('link', { name: 'Queue dashboard' }).click();
    await page.waitForURL(`${base}/admin/queues`);
    await page.goto(`${base}/admin/queues/queue/send?status=failed`);
    // Each e-mail's retry was a send job of its own; the first e-mail was retried and sent from the
    // console above (its job replaced), and the other's failed job is retried here.
    await page.getByText(`send.${id}`, { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Retry all' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await waitFor('the e-mail retried from the dashboard', async () => (smtp.received.some((mail) => mail.to.includes(email)) ? true : undefined));
    await waitFor('its delivery to be sent', async () => {
      const { rows } = await p.db.pool.query<{ status: string }>('SELECT status FROM deliveries WHERE id = $1', [id]);
      return rows[0]?.status === 'sent' ? true : undefined;
    });
    expect(problems).toEqual([]);
  });

  it('logs out: the pages need a login again', async () => {
    await page.goto(`${base}/admin/console`);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${base}/admin/login`);
    await page.goto(`${base}/admin/console`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
  });
});

async function expectText(locator: ReturnType<Page['locator']>, text: string): Promise<void> {
  await expect.poll(async () => (await locator.first().textContent()) ?? '').toContain(text);
}
