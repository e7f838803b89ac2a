import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodContaining } from '@notify/core';
import { jobIds, queueKeyPrefix, QUEUE_NAMES } from '@notify/queues';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN } from '../support/app';
import { createTestDatabase, REDIS_URL } from '../support/database';
import { fastPathOn, makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';
import { parsePrometheus, valueOf } from '../support/prometheus';
import { pause, waitUntilSettled } from '../support/wait';

/** Deletes every Redis key of a queue prefix: what a Redis restart without persistence does. */
async function flushQueues(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  return deleted;
}

describe('digests fall due by the clock, in the organization time zone', () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  let clock = Date.now();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    // The clock below runs up to an hour ahead of PostgreSQL's, by which the reconciler would take a
    // delivery being sent for one long overdue and ask for it again (a job, skipped as being sent
    // here): it must not run during this test, which counts jobs.
    p = await startPipeline(smtp, { RECONCILE_INTERVAL_MS: '3600000' }, { now: () => new Date(clock) });
  });
  afterAll(async () => {
    await p.stop();
    await smtp.close();
  });

  it('sends an hourly digest once its hour is over, and nothing before', async () => {
    const org = await p.createOrg({ timezone: 'Asia/Kathmandu' });
    const member = org.members[0]!;
    await p.createRule(org.key, { name: 'Hourly', scope: 'asset_dns_changed', frequency: 'hourly', members: [member.team_member_uuid] });
    await p.ingest({ events: [1, 2].map((i) => makeEvent(org.id, { scope: 'asset_dns_changed', title: `DNS change ${i}` })) });
    const period = periodContaining({ frequency: 'hourly', deliveryHour: null, deliveryDayOfWeek: null, timeZone: 'Asia/Kathmandu' }, new Date(clock));
    // Kathmandu is UTC+05:45: its hours end at minute 15 UTC.
    expect(period.dueAt.getUTCMinutes()).toBe(15);
    await expect.poll(async () => (await p.db.pool.query(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending' AND due_at = $1`, [period.dueAt])).rows[0].n, { message: 'the matches' }).toBe(2);
    // Time must pass here: the scheduler ticks every 100 ms, and none of its ticks before the hour ends may send.
    await pause(400);
    expect(smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(0);
    clock = period.dueAt.getTime() + 1000;
    await expect.poll(() => smtp.received.some((mail) => mail.to.includes(member.email)), { message: 'the digest' }).toBe(true);
    const [mail] = smtp.received.filter((m) => m.to.includes(member.email));
    expect(mail!.subject).toContain('Hourly digest');
    expect(mail!.html).toContain('DNS change 1');
    expect(mail!.html).toContain('DNS change 2');
    await waitUntilSettled(p.db);
    expect(smtp.received.filter((m) => m.to.includes(member.email))).toHaveLength(1);
    // The process runs the deliver and send roles too: with their fast paths, it delivered the
    // period it found due, and sent its e-mail, without a job (neither queue timed one); without
    // them (the suite's queued run), a job of each queue did.
    const jobsTimed = async (queue: string) => {
      const metrics = await p.process.app!.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return valueOf(parsePrometheus(metrics.body), 'notify_job_duration_seconds_count', { queue, status: 'completed' }) ?? 0;
    };
    if (fastPathOn('sendInProcess')) expect(await jobsTimed('send')).toBe(0);
    else expect(await jobsTimed('send')).toBeGreaterThan(0);
    if (fastPathOn('deliverInProcess')) expect(await jobsTimed('deliver')).toBe(0);
    else expect(await jobsTimed('deliver')).toBeGreaterThan(0);
  });
});

describe('recovery: downtime, lost Redis work, several processes', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
    await smtp.close();
  });

  const count = (email: string) => smtp.received.filter((mail) => mail.to.includes(email)).length;

  it('sends a digest that fell due while every worker was down once they are back', async () => {
    let clock = Date.now();
    const first = await startPipeline(smtp, {}, { db, now: () => new Date(clock) });
    const org = await first.createOrg({ timezone: 'Europe/Berlin' });
    const member = org.members[0]!;
    await first.createRule(org.key, { name: 'Daily', scope: 'new_email_breach_detected', frequency: 'daily', delivery_hour: 7, members: [member.team_member_uuid] });
    await first.ingest({ events: [makeEvent(org.id, { scope: 'new_email_breach_detected', title: 'Breach' })] });
    await expect.poll(async () => (await db.pool.query(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`)).rows[0].n, { message: 'the match' }).toBe(1);
    const { rows } = await db.pool.query<{ due_at: Date }>(`SELECT due_at FROM matches WHERE status = 'pending'`);
    await first.stop();

    // Everything is down past the delivery time; then two processes come back at once.
    clock = rows[0]!.due_at.getTime() + 3 * 3600_000;
    const [a, b] = await Promise.all([
      startPipeline(smtp, {}, { db, queuePrefix: first.queuePrefix, now: () => new Date(clock) }),
      startPipeline(smtp, {}, { db, queuePrefix: first.queuePrefix, now: () => new Date(clock) }),
    ]);
    try {
      await expect.poll(() => count(member.email), { message: 'the late digest' }).toBe(1);
      await waitUntilSettled(db);
      expect(count(member.email)).toBe(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('rebuilds work that Redis lost from PostgreSQL', async () => {
    // Only the API runs: events are stored and queued, but nothing consumes them.
    const api = await startPipeline(smtp, { ROLES: 'api' }, { db });
    const org = await api.createOrg();
    const member = org.members[0]!;
    const rule = await api.createRule(org.key, { name: 'Lost', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    await api.ingest({ events: [makeEvent(org.id, { title: 'survives a Redis flush' })] });
    await api.stop();
    expect(await flushQueues(api.queuePrefix)).toBeGreaterThan(0);

    const workers = await startPipeline(smtp, { RECONCILE_INTERVAL_MS: '200', RECONCILE_GRACE_MS: '100' }, { db, queuePrefix: api.queuePrefix });
    try {
      await workers.waitForIndex(rule.id, true);
      await expect.poll(() => count(member.email), { message: 'the e-mail' }).toBe(1);
      await waitUntilSettled(db);
      expect(count(member.email)).toBe(1);
    } finally {
      await workers.stop();
    }
  });

  it('sends work still owed whose job already failed for good (a long database outage spent its retries)', async () => {
    let clock = Date.now();
    // No schedule role yet: the matches wait.
    const first = await startPipeline(smtp, { ROLES: 'api,match,send' }, { db, now: () => new Date(clock) });
    const org = await first.createOrg();
    const member = org.members[0]!;
    await first.createRule(org.key, { name: 'Hourly', scope: 'asset_dns_changed', frequency: 'hourly', members: [member.team_member_uuid] });
    await first.ingest({ events: [makeEvent(org.id, { scope: 'asset_dns_changed', title: 'Outlived its job' })] });
    await expect.poll(async () => (await db.pool.query(`SELECT count(*)::int AS n FROM matches m JOIN notification_rules r ON r.id = m.rule_id WHERE r.organization_id = $1`, [org.id])).rows[0].n, { message: 'the match' }).toBe(1);
    const { rows } = await db.pool.query<{ rule_id: string; period_key: string; due_at: Date }>(
      `SELECT m.rule_id, m.period_key, m.due_at FROM matches m JOIN notification_rules r ON r.id = m.rule_id WHERE r.organization_id = $1`,
      [org.id],
    );
    const digest = { ruleId: rows[0]!.rule_id, periodKey: rows[0]!.period_key };
    await first.stop();

    // The period's digest job ran while the database was away and failed its last try: it stays, failed, under the digest's id.
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAMES.deliver, { connection, prefix: queueKeyPrefix(first.queuePrefix, QUEUE_NAMES.deliver) });
    await queue.add('deliver', digest, { jobId: jobIds.deliver(digest), attempts: 1 });
    const failing = new Worker(QUEUE_NAMES.deliver, async () => {
      throw new UnrecoverableError('connect ECONNREFUSED 127.0.0.1:5432');
    }, { connection, prefix: queueKeyPrefix(first.queuePrefix, QUEUE_NAMES.deliver) });
    await expect.poll(() => queue.getJobState(jobIds.deliver(digest)), { message: 'the failed job' }).toBe('failed');
    await failing.close();

    // Due for longer than the reconciler's grace (10 s). The schedule role runs without the deliver
    // role, so its ticks ask for a deliver job, which the failed one of the same id hides: only the
    // reconciler, replacing it, gets the digest out.
    clock = rows[0]!.due_at.getTime() + 11_000;
    const scheduler = await startPipeline(smtp, { ROLES: 'schedule,send', RECONCILE_INTERVAL_MS: '300' }, { db, queuePrefix: first.queuePrefix, now: () => new Date(clock) });
    const deliverer = await startPipeline(smtp, { ROLES: 'deliver' }, { db, queuePrefix: first.queuePrefix, now: () => new Date(clock) });
    try {
      await expect.poll(() => count(member.email), { message: 'the digest' }).toBe(1);
      await waitUntilSettled(db);
      expect(count(member.email)).toBe(1);
      expect(smtp.received.find((mail) => mail.to.includes(member.email))!.html).toContain('Outlived its job');
    } finally {
      await deliverer.stop();
      await scheduler.stop();
      await queue.close();
      connection.disconnect();
    }
  });

  it('two processes of every role send each e-mail exactly once', async () => {
    const prefix = `test-dup-${Date.now().toString(36)}`;
    const [a, b] = await Promise.all([startPipeline(smtp, {}, { db, queuePrefix: prefix }), startPipeline(smtp, {}, { db, queuePrefix: prefix })]);
    try {
      const org = await a.createOrg({ memberCount: 10 });
      const rules = [];
      for (const member of org.members) {
        rules.push(await a.createRule(org.key, { name: `r ${member.email}`, scope: 'new_client_credential_detected', members: [member.team_member_uuid] }));
      }
      for (const rule of rules) await b.waitForIndex(rule.id as string, true);
      // The same events through both processes' ingest, interleaved.
      const events = Array.from({ length: 10 }, (_, i) => makeEvent(org.id, { scope: 'new_client_credential_detected', title: `leak ${i}` }));
      await Promise.all([a.ingest({ events }), b.ingest({ events })]);
      await expect.poll(() => org.members.every((member) => count(member.email) >= 1), { message: 'one e-mail each' }).toBe(true);
      // Followers of the burst window (1 s) come as one more e-mail per member.
      await expect.poll(() => org.members.every((member) => count(member.email) >= 2), { message: 'the burst e-mails' }).toBe(true);
      await waitUntilSettled(db);
      const ids = smtp.received.filter((mail) => org.members.some((m) => mail.to.includes(m.email))).map((mail) => mail.messageId);
      expect(new Set(ids).size).toBe(ids.length);
      for (const member of org.members) expect(count(member.email)).toBe(2);
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM matches m JOIN notification_rules r ON r.id = m.rule_id WHERE r.organization_id = $1`, [org.id]);
      expect(rows[0].n).toBe(100);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
