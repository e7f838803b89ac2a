import { describe, expect, it } from 'vitest';
import { startPipeline, type PipelineHarness } from '../support/pipeline';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { report, scale, settle, storedEvents, tally } from './support/stream';

const EVENTS = scale(300, 3000);
const RULES = 20;
const FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
const DAY_MS = 86_400_000;

/**
 * Processes run in this test process here: they share a clock the test moves, so digests fall
 * due while nothing runs. Every frequency, in a time zone with a half-hour offset.
 */
describe('fault: digests fall due while every worker is down', () => {
  const running: PipelineHarness[] = [];
  let clock = Date.parse('2026-11-10T09:20:00Z');
  const now = () => new Date(clock);
  const s = useScenario({
    events: EVENTS,
    rules: RULES,
    tag: 'digest',
    timezone: 'Asia/Kolkata',
    schedule: (k) => {
      const frequency = FREQUENCIES[k % FREQUENCIES.length]!;
      return { frequency, ...(frequency !== 'hourly' && { delivery_hour: k % 24 }), ...(frequency === 'weekly' && { delivery_day_of_week: k % 7 }) };
    },
    around: { after: async () => void (await Promise.all(running.map((p) => p.stop()))) },
  });

  it('sends each digest once when they come back, with every event of its period', async () => {
    const first = await startPipeline(s.smtp, {}, { db: s.db, now });
    running.push(first);
    for (let i = 0; i < s.setup.events.length; i += 50) {
      const response = await first.ingest({ events: s.setup.events.slice(i, i + 50).map((event) => ({ ...event, occurred_at: now().toISOString() })) });
      expect(response.statusCode).toBe(202);
    }
    const pending = async () => (await s.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE status = 'pending'`)).rows[0]!.n;
    await expect.poll(pending, { timeout: 30_000, interval: 50 }).toBe(EVENTS);
    expect(s.smtp.received).toHaveLength(0);

    // Everything stops; meanwhile every period (the monthly ones included) ends.
    await first.stop();
    running.length = 0;
    clock += 35 * DAY_MS;
    // Nothing runs, so nothing moved: every match still waits and no e-mail went out.
    expect(await pending()).toBe(EVENTS);
    expect(s.smtp.received).toHaveLength(0);

    // Two processes come back at once.
    const queuePrefix = first.queuePrefix;
    running.push(...(await Promise.all([startPipeline(s.smtp, {}, { db: s.db, now, queuePrefix }), startPipeline(s.smtp, {}, { db: s.db, now, queuePrefix })])));
    const stored = await storedEvents(s.db);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    report('digest-due-while-down', { ...figures, rules: RULES, frequencies: FREQUENCIES.join(','), down_days: 35 });

    expectDeliveredOnce(figures);
    // One digest per rule and member: all of a rule's events fell in one period.
    expect(figures.emails).toBe(RULES * 2);
    expect(s.smtp.received.every((mail) => /digest/i.test(mail.subject))).toBe(true);
  }, scale(120_000, 600_000));
});
