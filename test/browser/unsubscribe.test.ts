import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';

/** The unsubscribe page an e-mail's link opens, in Debian's Chromium, with JavaScript off as many mail clients' browsers have it. */

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.warn(`SKIPPED test/browser/unsubscribe.test.ts: ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it).`);

describe.skipIf(!HAS_CHROMIUM)('the unsubscribe page in a real browser', { timeout: 60_000 }, () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  let base: string;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    p = await startPipeline(smtp);
    await p.process.app!.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.process.app!.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  });
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
    await smtp?.close();
  });

  it('opens from the e-mail, names the rule and organization, unsubscribes and resubscribes with its buttons', async () => {
    const org = await p.createOrg({ name: 'Acme <Security>', memberCount: 2 });
    const [member, other] = org.members;
    const rule = await p.createRule(org.key, { name: 'RDP "exposed"', scope: 'new_open_port_detected', members: [member!.team_member_uuid, other!.team_member_uuid] });
    expect((await p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await expect.poll(() => smtp.received.filter((mail) => mail.to.includes(member!.email)).length).toBe(1);
    const mail = smtp.received.find((received) => received.to.includes(member!.email))!;
    // The footer's link (the same page as List-Unsubscribe), opened on this test's port.
    const link = /https?:\/\/[^\s<>"]+\/unsubscribe\/[A-Za-z0-9_-]{64}/.exec(mail.text)![0];
    const subscribed = async () =>
      Object.fromEntries(((await p.api(org.key, 'GET', `/v1/platform/notification-rules/${rule.id}`)).json().members as Array<{ email: string; subscribed: boolean }>).map((m) => [m.email, m.subscribed]));

    const opened = await page.goto(`${base}${new URL(link).pathname}`);
    expect(opened!.status()).toBe(200);
    await expect(page.title()).resolves.toBe('Notification e-mails');
    const text = await page.locator('main').innerText();
    expect(text).toContain('RDP "exposed"');
    expect(text).toContain('Acme <Security>');
    expect(text).toContain(member!.email);
    // Opening the page changed nothing.
    expect(await subscribed()).toEqual({ [member!.email]: true, [other!.email]: true });

    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('status').filter({ hasText: 'You are unsubscribed.' }).waitFor();
    expect(await subscribed()).toEqual({ [member!.email]: false, [other!.email]: true });
    // Reloading the answer (the browser offers to post again) or opening the link again shows the state as it is.
    await page.goto(`${base}${new URL(link).pathname}`);
    expect(await page.locator('main').innerText()).toContain('no longer receives');

    await page.getByRole('button', { name: 'Resubscribe' }).click();
    await page.getByRole('status').filter({ hasText: 'You are subscribed again.' }).waitFor();
    expect(await subscribed()).toEqual({ [member!.email]: true, [other!.email]: true });
    expect(problems).toEqual([]);
  });

  it('shows a page saying a broken link is not valid', async () => {
    const response = await page.goto(`${base}/unsubscribe/${'A'.repeat(64)}`);
    expect(response!.status()).toBe(404);
    expect(await page.locator('h1').innerText()).toBe('This link is not valid');
  });
});
