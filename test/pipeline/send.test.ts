import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeInLoop, createMailRenderer, createMailTransport, type MailRenderer, type MailTransport } from '@notify/mail';
import { createLogger } from '@notify/observability';
import { DeliverStage, emailDestination, SendInProcess, SendStage, sendQueue, type PipelineResources } from '@notify/pipeline';
import { unsubscribeToken, type EventDetails } from '@notify/core';
import { createTestDeliveries, recordMatches, withTransaction, type DeliveryEvent } from '@notify/db';
import { createRedis, Queues } from '@notify/queues';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { createTestDatabase, REDIS_URL } from '../support/database';
import { startRelay, type TcpRelay } from '../support/relay';

/** The send stage's sendOne and sendMany against the real database and a real SMTP server: claims, outages, the record. */
describe('SendStage: one send per delivery, whatever asks', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: ReturnType<typeof createRedis>;
  let smtp: TestSmtpServer;
  let relay: TcpRelay;
  let transport: MailTransport;
  let ctx: PipelineResources & { unsubscribe: { secret: string; baseUrl: string } };
  let composer: ReturnType<typeof composeInLoop>;
  /** A sender (a process's send stage) of its own: `concurrency` e-mails in flight. */
  let senderWith: (options?: { claimTimeoutMs?: number; composer?: ReturnType<typeof composeInLoop>; concurrency?: number }) => SendStage;
  let stage: SendStage;
  let deliver: DeliverStage;
  let renderer: MailRenderer;
  const org = randomUUID();
  const rule = randomUUID();
  const member = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createRedis(REDIS_URL, 'test-send-delivery');
    // A slow server: a send takes 300 ms, long enough for a second sender to ask meanwhile.
    smtp = await startSmtpServer({ acceptDelayMs: 300 });
    relay = await startRelay({ host: '127.0.0.1', port: smtp.port });
    transport = createMailTransport({ smtpUrl: `smtp://127.0.0.1:${relay.port}`, outboxDir: 'unused', maxConnections: 2 });
    ctx = {
      db,
      queues: new Queues({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` }),
      now: () => new Date(),
      unsubscribe: { secret: 'test-unsubscribe-secret-of-32-characters', baseUrl: 'http://localhost/unsubscribe' },
    };
    composer = composeInLoop((renderer = await createMailRenderer()));
    senderWith = (options = {}) => new SendStage(ctx, {
      destination: emailDestination({ composer: options.composer ?? composer, transport, unsubscribe: ctx.unsubscribe, from: 'alerts@notify.test', messageIdDomain: 'notify.test' }),
      claimTimeoutMs: options.claimTimeoutMs ?? 2000,
      concurrency: options.concurrency ?? 1,
    });
    stage = senderWith();
    deliver = new DeliverStage(ctx, sendQueue(ctx));
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'o')`, [org]);
    await db.pool.query(`INSERT INTO team_members (id, organization_id, email) VALUES ($1, $2, 'a@x.example')`, [member, org]);
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, 'r', 'asset_dns_changed', 'daily', 9)`, [rule, org]);
    await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) VALUES ($1, $2)`, [rule, member]);
  });
  afterAll(async () => {
    await transport.close();
    await ctx.queues.close();
    redis.disconnect();
    await relay.close();
    await smtp.close();
    await db.drop();
  });

  async function newDelivery(): Promise<string> {
    const period = `p-${randomBytes(4).toString('hex')}`;
    const event = `e-${period}`;
    await db.pool.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, matched_at) VALUES ($1, $2, 'asset_dns_changed', now(), 'a.example', $3, now())`, [org, event, `title ${period}`]);
    await db.pool.query(`INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
       SELECT $1::uuid, $2::uuid, $3::text, received_at, $4::text, now() FROM events WHERE organization_id = $2::uuid AND id = $3::text`, [rule, org, event, period]);
    const [id] = await deliver.deliverPeriods([{ ruleId: rule, periodKey: period }]);
    return id!;
  }
  const row = async (id: string) =>
    (await db.pool.query<{ status: string; attempts: number }>('SELECT status, attempts FROM deliveries WHERE id = $1', [id])).rows[0]!;

  it('sends once when two senders ask at the same time', async () => {
    const id = await newDelivery();
    const before = smtp.received.length;
    const outcomes = await Promise.all([stage.sendOne(id), stage.sendOne(id)]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['sent', 'skipped']);
    expect(smtp.received.length - before).toBe(1);
    expect(await row(id)).toEqual({ status: 'sent', attempts: 1 });
  });

  it('never takes over its own sender\'s claim, however old: asked again meanwhile, it skips', async () => {
    // A claim timeout shorter than the 300 ms send: to a claim alone, the first send's would look abandoned
    // (as every claim in flight does after a PostgreSQL outage longer than the timeout).
    const quick = senderWith({ claimTimeoutMs: 50 });
    const id = await newDelivery();
    const before = smtp.received.length;
    const first = quick.sendOne(id);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const again = await quick.sendOne(id);
    expect(again).toEqual({ status: 'skipped', reason: 'being sent by this process' });
    expect((await first).status).toBe('sent');
    expect(smtp.received.length - before).toBe(1);
    expect(await row(id)).toEqual({ status: 'sent', attempts: 1 });
  });

  it('takes over a claim abandoned by a dead sender once it is older than the claim timeout', async () => {
    const id = await newDelivery();
    // A sender claimed it and died before sending.
    await db.pool.query(`UPDATE deliveries SET status = 'sending', attempts = 1, updated_at = now() WHERE id = $1`, [id]);
    expect((await stage.sendOne(id)).status).toBe('skipped');
    await db.pool.query(`UPDATE deliveries SET updated_at = now() - interval '3 seconds' WHERE id = $1`, [id]);
    expect((await stage.sendOne(id)).status).toBe('sent');
    expect(await row(id)).toEqual({ status: 'sent', attempts: 2 });
  });

  it('leaves the delivery pending, its attempt uncounted, while the SMTP server cannot be reached', async () => {
    const id = await newDelivery();
    await relay.cut();
    try {
      const outcome = await stage.sendOne(id);
      expect(outcome).toMatchObject({ status: 'failed', unavailable: true, permanent: false });
      expect(await row(id)).toEqual({ status: 'pending', attempts: 0 });
    } finally {
      await relay.restore();
    }
    expect((await stage.sendOne(id)).status).toBe('sent');
    expect(await row(id)).toEqual({ status: 'sent', attempts: 1 });
  });
  it("renders a rule's digest twice for its members however many they are, each e-mail their own", async () => {
    const team = randomUUID();
    const members = Array.from({ length: 5 }, (_, i) => ({ id: randomUUID(), email: `m${i}@team.example`, name: i === 2 ? null : `Member ${i}` }));
    await db.pool.query(`INSERT INTO notification_rules (id, organization_id, name, scope, frequency, delivery_hour) VALUES ($1, $2, 'team', 'asset_dns_changed', 'daily', 9)`, [team, org]);
    for (const member of members) {
      await db.pool.query(`INSERT INTO team_members (id, organization_id, email, name) VALUES ($1, $2, $3, $4)`, [member.id, org, member.email, member.name]);
      await db.pool.query(`INSERT INTO notification_rule_members (rule_id, team_member_id) VALUES ($1, $2)`, [team, member.id]);
    }
    const period = `p-${randomBytes(4).toString('hex')}`;
    for (const n of [1, 2, 3]) {
      await db.pool.query(`INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, matched_at) VALUES ($1, $2, 'asset_dns_changed', now(), 'a.example', $3, now())`, [org, `${period}-${n}`, `change ${n}`]);
      await db.pool.query(`INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
         SELECT $1::uuid, $2::uuid, $3::text, received_at, $4::text, now() FROM events WHERE organization_id = $2::uuid AND id = $3::text`, [team, org, `${period}-${n}`, period]);
    }
    const ids = await deliver.deliverPeriods([{ ruleId: team, periodKey: period }]);
    expect(ids).toHaveLength(5);
    // A sender of its own, whose renderer counts its renders.
    const renders = { alone: 0, shared: 0 };
    const counting = senderWith({
      composer: composeInLoop({
        render: (content) => (renders.alone++, renderer.render(content)),
        renderShared: (content) => (renders.shared++, renderer.renderShared(content)),
      }),
    });
    for (const id of ids) expect((await counting.sendOne(id)).status).toBe('sent');
    expect(renders).toEqual({ alone: 1, shared: 1 });
    for (const member of members) {
      const mail = smtp.received.find((received) => received.to.includes(member.email))!;
      for (const n of [1, 2, 3]) expect(mail.text).toContain(`change ${n}`);
      expect(mail.text.includes('Hello')).toBe(member.name !== null);
      if (member.name) expect(mail.text).toContain(`Hello ${member.name},`);
      const link = /Unsubscribe from this rule: (\S+)/.exec(mail.text)![1]!;
      expect(mail.raw.toString('latin1')).toContain(`List-Unsubscribe: <${link}>`);
    }
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const statuses = async (ids: readonly string[]) =>
    (await db.pool.query<{ status: string; n: number }>('SELECT status::text, count(*)::int AS n FROM deliveries WHERE id = ANY($1::uuid[]) GROUP BY 1', [ids])).rows
      .reduce<Record<string, number>>((all, { status, n }) => ({ ...all, [status]: n }), {});

  it('shows every field of a stored event as the renderer shows it, a digest\'s and a test send\'s alike', async () => {
    // Every field an e-mail shows, in the names the claim renames them from (asset_type, occurred_at, …).
    const details: EventDetails = {
      id: `full-${randomBytes(4).toString('hex')}`, scope: 'asset_dns_changed', occurredAt: new Date('2026-11-20T14:05:09.123Z'),
      asset: 'full.example', assetType: 'domain', severity: 'high', tags: ['dns', 'prod'], title: 'A record changed',
      summary: 'From 1.2.3.4\nto 5.6.7.8', url: 'https://platform.example/findings/full', data: { ttl: 300, record: 'A' }, // in the order jsonb keeps keys (shorter first)
    };
    const stored: DeliveryEvent = {
      id: details.id, scope: details.scope, occurred_at: details.occurredAt.toISOString(), asset: details.asset, asset_type: details.assetType,
      severity: details.severity, tags: details.tags, title: details.title, summary: details.summary, url: details.url, data: details.data,
    };
    await db.pool.query(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data, matched_at)
       VALUES ($1, $2, 'asset_dns_changed', $3, $4, $5, $6, $7, $8, $9, $10, $11, now())`,
      [org, details.id, details.occurredAt, details.asset, details.assetType, details.severity, details.tags, details.title, details.summary, details.url, details.data],
    );
    const period = `p-${details.id}`;
    await db.pool.query(`INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
       SELECT $1::uuid, $2::uuid, $3::text, received_at, $4::text, now() FROM events WHERE organization_id = $2::uuid AND id = $3::text`, [rule, org, details.id, period]);
    const [digest] = await deliver.deliverPeriods([{ ruleId: rule, periodKey: period }]);
    const [test] = await createTestDeliveries(db, rule, [member], `t-${details.id}`, stored);
    const sent = async (id: string) => {
      expect((await stage.sendOne(id)).status).toBe('sent');
      return smtp.received.find((mail) => mail.messageId === `<${id}@notify.test>`)!;
    };
    const content = {
      organizationName: 'o', ruleName: 'r', scope: 'asset_dns_changed' as const, frequency: 'daily' as const, timeZone: 'UTC', events: [details], repeats: 0,
      recipient: { email: 'a@x.example', name: null }, unsubscribeUrl: `http://localhost/unsubscribe/${unsubscribeToken(ctx.unsubscribe.secret, rule, member)}`,
    };
    const text = (mail: { text: string }) => mail.text.replaceAll('\r\n', '\n').trim();
    expect(text(await sent(digest!))).toBe(renderer.render({ ...content, kind: 'digest', test: false }).text.trim());
    expect(text(await sent(test!.id))).toBe(renderer.render({ ...content, kind: 'instant', test: true }).text.trim());
  });

  it("claims a list's deliveries ahead of their turn, many in one statement, and sends each once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await newDelivery());
    const before = smtp.received.length;
    const sending = senderWith({ concurrency: 2 }).sendMany(ids, { finalAttempt: false });
    // Two e-mails in flight, 300 ms each; the first claim statement took sixteen deliveries at once.
    let claimed = 0;
    for (let i = 0; i < 25 && !claimed; i++) {
      await sleep(10);
      claimed = (await statuses(ids)).sending ?? 0;
    }
    expect(claimed).toBe(16);
    const result = await sending;
    expect(result.sent).toBe(20);
    expect(result.outcomes.every((outcome) => outcome?.status === 'sent')).toBe(true);
    expect(smtp.received.length - before).toBe(20);
    for (const id of ids) expect(await row(id)).toEqual({ status: 'sent', attempts: 1 });
  });

  it('puts back what it claimed ahead once the server cannot be reached: pending, the attempt uncounted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await newDelivery());
    await relay.cut();
    try {
      const result = await stage.sendMany(ids, { finalAttempt: false });
      expect(result.unreachable).toBeDefined();
      expect(result.outcomes[0]).toMatchObject({ status: 'failed', unavailable: true });
      expect(result.outcomes.slice(1)).toEqual([undefined, undefined, undefined, undefined, undefined]);
      for (const id of ids) expect(await row(id)).toEqual({ status: 'pending', attempts: 0 });
    } finally {
      await relay.restore();
    }
    const result = await senderWith({ concurrency: 2 }).sendMany(ids, { finalAttempt: false });
    expect(result.sent).toBe(6);
  });

  it('puts back a claim that waits long for its turn, so no other sender takes it for abandoned while it waits', async () => {
    // A third of this claim timeout (200 ms) is less than one e-mail (300 ms): the fourth delivery,
    // claimed at the start, waits 900 ms for its turn, long enough for its claim to look abandoned.
    const quick = senderWith({ claimTimeoutMs: 600 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await newDelivery());
    const before = smtp.received.length;
    const sending = quick.sendMany(ids, { finalAttempt: false });
    await sleep(700);
    // Another process's sender (a context of its own) asks for the fourth now: it finds it put back, and sends it.
    const other = await senderWith({ claimTimeoutMs: 600 }).sendOne(ids[3]!);
    expect(other.status).toBe('sent');
    const result = await sending;
    expect(result.outcomes.slice(0, 3).map((outcome) => outcome?.status)).toEqual(['sent', 'sent', 'sent']);
    expect(result.outcomes[3]?.status).toBe('skipped');
    expect(smtp.received.length - before).toBe(4);
    for (const id of ids) expect(await row(id)).toEqual({ status: 'sent', attempts: 1 });
  });

  it('sends a delivery its statement made claimed without claiming it again; not started or declined, it goes back to pending', async () => {
    const claimedDelivery = async () => {
      const event = `claimed-${randomBytes(4).toString('hex')}`;
      const { rows } = await db.pool.query<{ received_at: Date }>(
        `INSERT INTO events (organization_id, id, scope, occurred_at, asset, title) VALUES ($1, $2, 'asset_dns_changed', now(), 'a.example', $2) RETURNING received_at`, [org, event]);
      const now = new Date();
      const match = { ruleId: rule, organizationId: org, eventId: event, eventReceivedAt: rows[0]!.received_at, periodKey: `i-${event}`, dueAt: now, deliverNow: true };
      const { claimed } = await withTransaction(db, (tx) => recordMatches(tx, [], [match], now, { claimUpTo: 1, eventLimit: 500 }));
      expect(claimed).toHaveLength(1);
      return { ...claimed[0]!, title: event };
    };
    const delivery = await claimedDelivery();
    expect(await row(delivery.id)).toEqual({ status: 'sending', attempts: 1 });
    // Claimed for a sender: another one (a job's claim) leaves it alone.
    expect((await stage.sendOne(delivery.id)).status).toBe('skipped');
    const before = smtp.received.length;
    const result = await stage.sendMany([delivery.id], { finalAttempt: false, claimed: new Map([[delivery.id, delivery]]) });
    expect(result.outcomes[0]?.status).toBe('sent');
    expect(smtp.received.length - before).toBe(1);
    expect(smtp.received.at(-1)!.text).toContain(delivery.title);
    expect(await row(delivery.id)).toEqual({ status: 'sent', attempts: 1 });

    // Its turn never comes (the process stopping, or the server away before it): back to pending, the attempt uncounted.
    const stopped = await claimedDelivery();
    const unstarted = await stage.sendMany([stopped.id], { finalAttempt: false, stopping: () => true, claimed: new Map([[stopped.id, stopped]]) });
    expect(unstarted.outcomes).toEqual([undefined]);
    expect(await row(stopped.id)).toEqual({ status: 'pending', attempts: 0 });

    const declined = await claimedDelivery();
    // This process's send stage has no room: the delivery goes back, and to the send queue.
    const full = new SendInProcess(ctx, stage, { claimWhenMade: true, log: createLogger({ level: 'silent' }), maxDeliveries: 0 });
    await full.hand([declined.id], [declined]);
    expect(await row(declined.id)).toEqual({ status: 'pending', attempts: 0 });
    expect(await ctx.queues.send.getJob(`send.${declined.id}`)).toBeDefined();
  });
});
