import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database';
import { startPipeline, type PipelineHarness } from '../support/pipeline';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import { prepareStream, report, scale, settle, sleep, storedEvents, tally, type StreamSetup } from './support/stream';

const EVENTS = scale(300, 3000);
const RULES = 20;
const FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
const DAY_MS = 86_400_000;

/**
 * Processes run in this test process here: they share a clock the test moves, so digests fall
 * due while nothing runs. Every frequency, in a time zone with a half-hour offset.
 */
describe('fault: digests fall due while every worker is down', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let setup: StreamSetup;
  const running: PipelineHarness[] = [];
  let clock = Date.parse('2026-11-10T09:20:00Z');
  const now = () => new Date(clock);

  beforeAll(async () => {
    smtp = await startSmtpServer();
    db = await createTestDatabase();
    setup = await prepareStream(db, {
      events: EVENTS,
      rules: RULES,
      tag: 'digest',
      timezone: 'Asia/Kolkata',
      schedule: (k) => {
        const frequency = FREQUENCIES[k % FREQUENCIES.length]!;
        return { frequency, ...(frequency !== 'hourly' && { delivery_hour: k % 24 }), ...(frequency === 'weekly' && { delivery_day_of_week: k % 7 }) };
      },
    });
  });
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await db.drop();
    await smtp.close();
  });

  it('sends each digest once when they come back, with every event of its period', async () => {
    const first = await startPipeline(smtp, {}, { db, now });
    running.push(first);
    for (let i = 0; i < setup.events.length; i += 50) {
      const response = await first.ingest({ events: setup.events.slice(i, i + 50).map((event) => ({ ...event, occurred_at: now().toISOString() })) });
      expect(response.statusCode).toBe(202);
    }
    const deadline = Date.now() + 30_000;
    const pending = async () => (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`)).rows[0]!.n;
    while ((await pending()) < EVENTS && Date.now() < deadline) await sleep(50);
    expect(await pending()).toBe(EVENTS);
    expect(smtp.received).toHaveLength(0);

    // Everything stops; meanwhile every period (the monthly ones included) ends.
    await first.stop();
    running.length = 0;
    clock += 35 * DAY_MS;
    await sleep(200);
    expect(smtp.received).toHaveLength(0);

    // Two processes come back at once.
    const queuePrefix = first.queuePrefix;
    running.push(...(await Promise.all([startPipeline(smtp, {}, { db, now, queuePrefix }), startPipeline(smtp, {}, { db, now, queuePrefix })])));
    const stored = await storedEvents(db);
    const figures = await settle(() => tally(setup, stored, smtp.received), scale(60_000, 180_000));
    report('digest-due-while-down', { ...figures, rules: RULES, frequencies: FREQUENCIES.join(','), down_days: 35 });

    expect(figures.missing).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.retransmitted).toBe(0);
    expect(figures.unexpected).toBe(0);
    // One digest per rule and member: all of a rule's events fell in one period.
    expect(figures.emails).toBe(RULES * 2);
    expect(smtp.received.every((mail) => /digest/i.test(mail.subject))).toBe(true);
  }, scale(120_000, 600_000));
});
