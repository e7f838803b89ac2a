import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '@notify/mail/testing';
import { fastPathOn, makeEvent, startPipeline, usePipeline, type PipelineHarness } from '../support/pipeline';
import { startRelay, type TcpRelay } from '../support/relay';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe('delivery pipeline end to end: POST /v1/ingest/events to a real SMTP server', () => {
  const t = usePipeline();

  const mailsTo = (email: string): ReceivedMail[] => t.smtp.received.filter((mail) => mail.to.includes(email));
  async function waitForMails(email: string, count: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    await expect.poll(() => mailsTo(email).length, { timeout: timeoutMs, interval: 25, message: `e-mails to ${email}` }).toBeGreaterThanOrEqual(count);
    return mailsTo(email);
  }
  async function ingest(events: unknown[]): Promise<void> {
    const response = await t.p.ingest({ events });
    expect(response.statusCode, response.body).toBe(202);
  }

  it('runs with the fast paths this run of the suite names, and only those', () => {
    const { fastPaths, inProcess } = t.p.process.runtime.pipeline;
    for (const name of Object.keys(fastPaths) as Array<keyof typeof fastPaths>) expect(fastPaths[name], name).toBe(fastPathOn(name));
    expect(inProcess.send !== undefined).toBe(fastPathOn('sendInProcess'));
    expect(inProcess.deliver !== undefined).toBe(fastPathOn('deliverInProcess'));
    expect(inProcess.match?.inStore !== undefined).toBe(fastPathOn('matchInStore'));
  });

  it('sends an instant rule its first match at once, naming organization, count and kind', async () => {
    const org = await t.p.createOrg({ name: 'Acme Corp' });
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Open ports', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const event = makeEvent(org.id, { title: 'Port 3389 (RDP) open on mail.example.com' });
    await ingest([event]);
    const [mail] = await waitForMails(member.email, 1);
    expect(mail!.subject).toContain('Acme Corp');
    expect(mail!.subject).toMatch(/1\b/);
    expect(mail!.subject.toLowerCase()).toContain('open port');
    expect(mail!.html).toContain('Port 3389 (RDP) open on mail.example.com');
    expect(mail!.text).toContain('Port 3389 (RDP) open on mail.example.com');
    expect(mail!.html.replaceAll('&#x2F;', '/')).toMatch(/href="https:\/\/platform\.example\.com\/findings\/1"/);
    expect(mail!.messageId).toMatch(/^<[0-9a-f-]{36}@notify\.test>$/);
    // The server has accepted the e-mail; recording it as sent follows that accept.
    await waitUntilSettled(t.p.db);
    const { rows } = await t.p.db.pool.query(`SELECT status, attempts, message_id, sent_at FROM deliveries WHERE email = $1`, [member.email]);
    expect(rows).toEqual([expect.objectContaining({ status: 'sent', attempts: 1, message_id: mail!.messageId })]);
  });

  // A fast path's own test: with it off (the suite's queued run) there is nothing of it to see.
  it.runIf(fastPathOn('matchInProcess'))('matches the events it ingests in the same process, without a match job, when it runs the match role too', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const scope = 'new_open_port_detected';
    await t.p.createRule(org.key, { name: 'Here', scope, members: [member.team_member_uuid] });
    const queue = t.p.process.deps.queues.match.get(scope)!;
    const before = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    await ingest([makeEvent(org.id, { title: 'matched here' })]);
    const [mail] = await waitForMails(member.email, 1);
    expect(mail!.html).toContain('matched here');
    // Completed match jobs are kept an hour: none was added for this event.
    expect(await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed')).toEqual(before);
    const { rows } = await t.p.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE organization_id = $1 AND matched_at IS NULL`, [org.id]);
    expect(rows[0].n).toBe(0);
  });

  // A fast path's own test: with it off (the suite's queued run) there is nothing of it to see.
  it.runIf(fastPathOn('matchInStore'))('matches a small request\'s events in the transaction that stores them, and e-mails them once', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'As stored', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const matcher = t.p.process.runtime.pipeline.inProcess.match!.inStore!;
    const match = vi.spyOn(matcher, 'match');
    const failed = vi.spyOn(matcher, 'failed');
    try {
      const event = makeEvent(org.id, { title: 'matched as stored' });
      await ingest([event]);
      expect(match).toHaveBeenCalledTimes(1);
      expect(match.mock.calls[0]![1].map((stored) => stored.id)).toEqual([event.id]);
      expect(failed).not.toHaveBeenCalled();
      const [mail] = await waitForMails(member.email, 1);
      expect(mail!.html).toContain('matched as stored');
      await waitUntilSettled(t.p.db);
      const { rows } = await t.p.db.pool.query(
        `SELECT e.matched_at IS NOT NULL AS matched, m.status::text AS match, d.status::text AS delivery, d.attempts
           FROM events e JOIN matches m ON m.organization_id = e.organization_id AND m.event_id = e.id JOIN deliveries d ON d.rule_id = m.rule_id AND d.period_key = m.period_key
          WHERE e.organization_id = $1`,
        [org.id],
      );
      expect(rows).toEqual([{ matched: true, match: 'delivered', delivery: 'sent', attempts: 1 }]);
      expect(mailsTo(member.email)).toHaveLength(1);
    } finally {
      match.mockRestore();
      failed.mockRestore();
    }
  });

  // A fast path's own test: with it off (the suite's queued run) there is nothing of it to see.
  it.runIf(fastPathOn('matchInStore'))('does not hold a request on a rule another transaction holds: its events are stored alone, and matched once it lets go', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, { name: 'Held', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const failed = vi.spyOn(t.p.process.runtime.pipeline.inProcess.match!.inStore!, 'failed');
    const holder = await t.p.db.pool.connect();
    try {
      // As a flush of the rule would hold it, for longer than the request may wait.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM notification_rules WHERE id = $1 FOR UPDATE', [rule.id]);
      const started = Date.now();
      await ingest([makeEvent(org.id, { title: 'held rule' })]);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(failed).toHaveBeenCalledTimes(1);
      expect(String(failed.mock.calls[0]![0])).toMatch(/lock timeout/);
      const { rows } = await t.p.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE organization_id = $1`, [org.id]);
      expect(rows[0].n).toBe(1);
      expect(mailsTo(member.email)).toEqual([]);
      await holder.query('COMMIT');
      const [mail] = await waitForMails(member.email, 1);
      expect(mail!.html).toContain('held rule');
      await waitUntilSettled(t.p.db);
      expect(mailsTo(member.email)).toHaveLength(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
      failed.mockRestore();
    }
  });

  // A fast path's own test: with it off (the suite's queued run) there is nothing of it to see.
  it.runIf(fastPathOn('sendInProcess'))('sends the e-mails of the deliveries it makes in the same process, without a send job, when it runs the send role too', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Sent here', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const queue = t.p.process.deps.queues.send;
    const before = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    await ingest([makeEvent(org.id, { title: 'sent here' })]);
    const [mail] = await waitForMails(member.email, 1);
    expect(mail!.html).toContain('sent here');
    // Completed send jobs are kept an hour: none was added for this e-mail.
    await waitUntilSettled(t.p.db);
    expect(await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed')).toEqual(before);
    const { rows } = await t.p.db.pool.query(`SELECT status, attempts FROM deliveries WHERE email = $1`, [member.email]);
    expect(rows).toEqual([{ status: 'sent', attempts: 1 }]);
  });

  it('coalesces a burst that follows the first e-mail into one more e-mail', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Burst', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await ingest([makeEvent(org.id, { title: 'first' })]);
    await waitForMails(member.email, 1);
    for (let i = 0; i < 5; i++) await ingest([makeEvent(org.id, { title: `burst ${i}` })]);
    const mails = await waitForMails(member.email, 2);
    await waitUntilSettled(t.p.db);
    expect(mailsTo(member.email)).toHaveLength(2);
    for (let i = 0; i < 5; i++) expect(mails[1]!.html).toContain(`burst ${i}`);
    expect(mails[1]!.subject).toMatch(/5\b/);
  });

  it('holds digest matches until their period, and a flush sends one digest per member now, each with their own name and link', async () => {
    const org = await t.p.createOrg({ memberCount: 3 });
    const [a, b, c] = org.members;
    // The members' e-mails share one render (the same events in the same zone): each still gets their own greeting and link.
    for (const [member, name] of [[a!, 'Zoë <Admin>'], [b!, 'Bob']] as const) {
      const named = await t.p.admin('PATCH', `/admin/v1/organizations/${org.id}/members/${member.team_member_uuid}`, { name });
      expect(named.statusCode, named.body).toBe(200);
    }
    const rule = await t.p.createRule(org.key, {
      name: 'Daily', scope: 'asset_ssl_changed', frequency: 'daily', delivery_hour: 6,
      members: [a!.team_member_uuid, b!.team_member_uuid, c!.team_member_uuid],
    });
    await ingest([1, 2, 3].map((i) => makeEvent(org.id, { scope: 'asset_ssl_changed', asset: `host${i}.example.com`, title: `Certificate changed ${i}` })));
    await waitUntilSettled(t.p.db);
    expect(mailsTo(a!.email)).toHaveLength(0);
    const sendJobs = () => t.p.process.deps.queues.send.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    const jobsBefore = await sendJobs();
    const flush = await t.p.admin('POST', `/admin/v1/notification-rules/${rule.id}/flush`);
    expect(flush.statusCode).toBe(202);
    expect(flush.json()).toEqual({ matches: 3, deliveries: 3 });
    const [toA] = await waitForMails(a!.email, 1);
    const [toB] = await waitForMails(b!.email, 1);
    const [toC] = await waitForMails(c!.email, 1);
    // The process runs the send role too: with sendInProcess, the flush's e-mails were sent without
    // a send job; without it (the suite's queued run), by send jobs.
    if (fastPathOn('sendInProcess')) expect(await sendJobs()).toEqual(jobsBefore);
    else await expect.poll(async () => (await sendJobs()).completed ?? 0).toBeGreaterThan(jobsBefore.completed ?? 0);
    const links = [toA!, toB!, toC!].map((mail) => /^List-Unsubscribe: <([^>]+)>/im.exec(mail.raw.toString('latin1'))![1]!);
    expect(new Set(links).size).toBe(3);
    for (const [index, mail] of [toA!, toB!, toC!].entries()) {
      for (let i = 1; i <= 3; i++) expect(mail.html).toContain(`host${i}.example.com`);
      expect(mail.subject).toMatch(/3\b/);
      expect(mail.html).toContain(`href="${links[index]!.replaceAll('/', '&#x2F;')}"`);
      expect(mail.text).toContain(`Unsubscribe from this rule: ${links[index]}`);
      for (const other of links.filter((_, i) => i !== index)) expect(mail.html + mail.text).not.toContain(other.split('/').pop());
    }
    expect(toA!.html).toContain('Hello Zoë &lt;Admin&gt;,'.replace('ë', '&#235;'));
    expect(toA!.text).toContain('Hello Zoë <Admin>,');
    expect(toB!.text).toContain('Hello Bob,');
    expect(toC!.text).not.toContain('Hello');
    expect(toA!.messageId).not.toBe(toB!.messageId);
    // Nothing is left to send: a second flush finds nothing.
    expect((await t.p.admin('POST', `/admin/v1/notification-rules/${rule.id}/flush`)).json()).toEqual({ matches: 0, deliveries: 0 });
  });

  it('sends only what the strategy lets through', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, {
      name: 'Critical production', scope: 'new_vulnerability_detected', members: [member.team_member_uuid],
      strategy: { must: [{ name: 'severity', type: 'gte', value: 'high' }], must_not: [{ name: 'tags', type: 'contains_any', value: ['test'] }] },
    });
    await ingest([
      makeEvent(org.id, { scope: 'new_vulnerability_detected', severity: 'low', title: 'too low' }),
      makeEvent(org.id, { scope: 'new_vulnerability_detected', severity: 'critical', tags: ['test'], title: 'test asset' }),
      makeEvent(org.id, { scope: 'new_vulnerability_detected', severity: 'critical', tags: ['production'], title: 'the one' }),
    ]);
    const [mail] = await waitForMails(member.email, 1);
    await waitUntilSettled(t.p.db);
    expect(mailsTo(member.email)).toHaveLength(1);
    expect(mail!.html).toContain('the one');
    expect(mail!.html).not.toContain('too low');
    expect(mail!.html).not.toContain('test asset');
  });

  it('sends nothing for a disabled rule, another scope or another organization', async () => {
    const org = await t.p.createOrg();
    const other = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, { name: 'Off', scope: 'new_open_port_detected', members: [member.team_member_uuid], enabled: false });
    await t.p.createRule(org.key, { name: 'Other scope', scope: 'asset_dns_changed', members: [member.team_member_uuid] });
    await ingest([makeEvent(org.id), makeEvent(other.id, { scope: 'asset_dns_changed' })]);
    await waitUntilSettled(t.p.db);
    expect(mailsTo(member.email)).toHaveLength(0);
    // Enabled again, the next event goes out.
    const enabled = await t.p.api(org.key, 'PUT', `${RULES}/${rule.id}`, { name: 'Off', members: [member.team_member_uuid], enabled: true });
    expect(enabled.statusCode).toBe(200);
    // The match stage's rule index follows the change within a second (Redis pub/sub).
    const announcedAt = Date.now();
    await t.p.waitForIndex(rule.id, true);
    expect(Date.now() - announcedAt).toBeLessThan(1000);
    await ingest([makeEvent(org.id)]);
    await waitForMails(member.email, 1);
  });

  it('treats a re-sent event id as the same event: one e-mail', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Dup', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const event = makeEvent(org.id);
    await ingest([event]);
    const again = await t.p.ingest({ events: [event] });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toEqual({ accepted: 0, duplicates: 1 });
    await waitForMails(member.email, 1);
    await waitUntilSettled(t.p.db);
    expect(mailsTo(member.email)).toHaveLength(1);
  });

  it('escapes event text: no HTML, script or link injection', async () => {
    const org = await t.p.createOrg({ name: 'Acme <b>Bold</b>' });
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Escape', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await ingest([makeEvent(org.id, {
      title: '<script>alert("x")</script><img src=x onerror=alert(1)>',
      asset: '"><a href="https://evil.example">click</a>',
      data: { note: '<iframe src="https://evil.example"></iframe>' },
    })]);
    const [mail] = await waitForMails(member.email, 1);
    expect(mail!.html).not.toContain('<script>');
    expect(mail!.html).not.toContain('<img src=x');
    expect(mail!.html).not.toContain('href="https://evil.example"');
    expect(mail!.html).not.toContain('href="javascript:');
    expect(mail!.html).not.toContain('<iframe');
    expect(mail!.html).toContain('&lt;script&gt;');
    expect(mail!.subject).not.toContain('\n');
  });

  it('stops e-mails to a removed member', async () => {
    const org = await t.p.createOrg({ memberCount: 2 });
    const [stay, leave] = org.members;
    await t.p.createRule(org.key, { name: 'Two', scope: 'new_open_port_detected', members: [stay!.team_member_uuid, leave!.team_member_uuid] });
    expect((await t.p.admin('DELETE', `/admin/v1/organizations/${org.id}/members/${leave!.team_member_uuid}`)).statusCode).toBe(204);
    await ingest([makeEvent(org.id)]);
    await waitForMails(stay!.email, 1);
    await waitUntilSettled(t.p.db);
    expect(mailsTo(leave!.email)).toHaveLength(0);
  });

  it('drops pending digest matches when the rule is disabled or deleted', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const body = { name: 'Weekly', scope: 'new_asset_discovered', frequency: 'weekly', members: [member.team_member_uuid] };
    const rule = await t.p.createRule(org.key, body);
    await ingest([makeEvent(org.id, { scope: 'new_asset_discovered' })]);
    const pending = async () => (await t.p.db.pool.query(`SELECT count(*)::int AS n FROM matches WHERE rule_id = $1 AND status = 'pending'`, [rule.id])).rows[0].n as number;
    await expect.poll(pending, { timeout: 5000, interval: 25 }).toBe(1);
    const disabled = await t.p.api(org.key, 'PUT', `${RULES}/${rule.id}`, { name: body.name, members: body.members, enabled: false });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(await pending()).toBe(0);
    const { rows } = await t.p.db.pool.query(`SELECT status FROM matches WHERE rule_id = $1`, [rule.id]);
    expect(rows).toEqual([{ status: 'dropped' }]);
    // Deleting the rule removes what was left of it.
    expect((await t.p.api(org.key, 'DELETE', `${RULES}/${rule.id}`)).statusCode).toBe(204);
    expect((await t.p.db.pool.query(`SELECT count(*)::int AS n FROM matches WHERE rule_id = $1`, [rule.id])).rows[0].n).toBe(0);
    expect((await t.p.admin('POST', `/admin/v1/notification-rules/${rule.id}/flush`)).statusCode).toBe(404);
  });
});

describe('SMTP failures', () => {
  const t = usePipeline();

  async function deliveryOf(email: string, status: string) {
    return vi.waitFor(
      async () => {
        const { rows } = await t.p.db.pool.query(`SELECT id, status, attempts, last_error, message_id FROM deliveries WHERE email = $1`, [email]);
        expect(rows[0], `the delivery to ${email}`).toMatchObject({ status });
        return rows[0];
      },
      { timeout: 10_000, interval: 25 },
    );
  }

  it('retries a transient failure (451) with backoff until it is accepted', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    t.smtp.setVerdict(({ to, attempt }) => (to.includes(member.email) && attempt <= 2 ? { code: 451, message: 'Try again later' } : 'accept'));
    await t.p.createRule(org.key, { name: 'Retry', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await t.p.ingest({ events: [makeEvent(org.id)] });
    const row = await deliveryOf(member.email, 'sent');
    expect(row.attempts).toBe(3);
    expect(t.smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(1);
  });

  // A fast path's own test: with it off (the suite's queued run) there is nothing of it to see.
  it.runIf(fastPathOn('sendInProcess'))('hands a delivery whose first attempt, in the process that made it, failed to a send job of its own with the attempts left, after the first backoff', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    t.smtp.setVerdict(({ to, attempt }) => (to.includes(member.email) && attempt === 1 ? { code: 451, message: 'Try again later' } : 'accept'));
    await t.p.createRule(org.key, { name: 'Retried by a job', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await t.p.ingest({ events: [makeEvent(org.id)] });
    const sent = await deliveryOf(member.email, 'sent');
    expect(sent.attempts).toBe(2);
    expect(t.smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(1);
    // The second attempt was the job's (completed jobs are kept an hour).
    const queues = t.p.process.deps.queues;
    const job = await queues.send.getJob(`send.${sent.id}`);
    expect(job?.finishedOn).toBeTypeOf('number');
    expect(job!.opts).toMatchObject({ attempts: queues.sendPolicy.attempts - 1, delay: queues.sendPolicy.backoffMs });
  });

  it('sends the e-mails of one send job on their own: a transient failure retries only the one still owed', async () => {
    const org = await t.p.createOrg({ memberCount: 3 });
    const [first, flaky, third] = org.members;
    t.smtp.setVerdict(({ to, attempt }) => (to.includes(flaky!.email) && attempt === 1 ? { code: 451, message: 'Try again later' } : 'accept'));
    // One rule, three members: their three deliveries are made together and go in one send job.
    await t.p.createRule(org.key, { name: 'Together', scope: 'new_open_port_detected', members: org.members.map((member) => member.team_member_uuid) });
    await t.p.ingest({ events: [makeEvent(org.id)] });
    const retried = await deliveryOf(flaky!.email, 'sent');
    expect(retried.attempts).toBe(2);
    for (const member of [first!, third!]) expect((await deliveryOf(member.email, 'sent')).attempts).toBe(1);
    for (const member of org.members) expect(t.smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(1);
  });

  it('records a permanent failure (550) without retrying, and an operator can retry it', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    let refuse = true;
    t.smtp.setVerdict(({ to }) => (refuse && to.includes(member.email) ? { code: 550, message: 'No such user' } : 'accept'));
    const rule = await t.p.createRule(org.key, { name: 'Refused', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await t.p.ingest({ events: [makeEvent(org.id)] });
    const row = await deliveryOf(member.email, 'failed');
    expect(row.attempts).toBe(1);
    expect(String(row.last_error)).toContain('550');
    const listed = await t.p.admin('GET', `/admin/v1/notification-rules/${rule.id}/deliveries?status=failed&limit=10`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().results).toEqual([expect.objectContaining({ id: row.id, status: 'failed', attempts: 1 })]);

    refuse = false;
    const retried = await t.p.admin('POST', `/admin/v1/deliveries/${row.id}/retry`);
    expect(retried.statusCode).toBe(202);
    const sent = await deliveryOf(member.email, 'sent');
    expect(sent.attempts).toBe(2);
    expect((await t.p.admin('POST', `/admin/v1/deliveries/${row.id}/retry`)).statusCode).toBe(409);
  });
});

describe('the SMTP server away when the process that made a delivery tries it, without a job', () => {
  let smtp: TestSmtpServer;
  let relay: TcpRelay;
  let p: PipelineHarness;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    relay = await startRelay({ host: '127.0.0.1', port: smtp.port });
    p = await startPipeline({ ...smtp, url: `smtp://127.0.0.1:${relay.port}` }, { MAIL_OUTAGE_MAX_PAUSE_MS: '1000' });
  });
  afterAll(async () => {
    await p?.stop();
    await relay?.close();
    await smtp?.close();
  });

  it('spends no attempt, hands the delivery to a send job with mail paused, and the job sends it once the server is back', async () => {
    const org = await p.createOrg();
    const member = org.members[0]!;
    await p.createRule(org.key, { name: 'While away', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await relay.cut();
    expect((await p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    const queues = p.process.deps.queues;
    const delivery = await vi.waitFor(async () => {
      const { rows } = await p.db.pool.query<{ id: string; status: string; attempts: number; last_error: string | null }>(
        `SELECT id, status, attempts, last_error FROM deliveries WHERE email = $1`, [member.email]);
      expect(rows[0]?.last_error, 'the first attempt').toBeTruthy();
      return rows[0]!;
    }, { timeout: 10_000, interval: 25 });
    expect(delivery).toMatchObject({ status: 'pending', attempts: 0 });
    // The delivery waits in a job of the paused send queue, not in the process that tried it.
    await vi.waitFor(async () => expect(await queues.send.getJob(`send.${delivery.id}`)).toBeTruthy(), { timeout: 5000, interval: 25 });
    expect(await queues.send.getRateLimitTtl()).toBeGreaterThan(0);
    expect(smtp.received).toHaveLength(0);

    await relay.restore();
    await vi.waitFor(async () => {
      const { rows } = await p.db.pool.query(`SELECT status, attempts FROM deliveries WHERE id = $1`, [delivery.id]);
      expect(rows[0]).toEqual({ status: 'sent', attempts: 1 });
    }, { timeout: 15_000, interval: 50 });
    await waitUntilSettled(p.db);
    expect(smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(1);
  });
});
