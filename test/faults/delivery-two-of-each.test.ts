import { describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import type { ServerProcess } from '../support/processes';
import { expectDeliveredOnce, useScenario } from './support/scenario';
import { processEnv } from './support/services';
import { report, scale, sendStream, settle, storedEvents, tally } from './support/stream';

const EVENTS = scale(300, 3000);

describe('fault: two processes of every role at once, on the same Redis and database', () => {
  const s = useScenario({ events: EVENTS, tag: 'twice', smtp: { acceptDelayMs: 2 } });

  it('sends each e-mail once, whichever process takes each step', async () => {
    const env = processEnv(s.db, { smtpUrl: s.smtp.url });
    const [a, b] = await Promise.all([s.spawn(env), s.spawn(env)]);

    // Requests alternate between the two APIs.
    const stream = await sendStream((request) => (request % 2 ? a : b).baseUrl!, INGEST_TOKEN, s.setup.events);
    const stored = await storedEvents(s.db);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), scale(60_000, 180_000));
    const sentBy = (p: ServerProcess) => p.lines.filter((line) => line.msg === 'e-mail sent').length;
    // A process logs 'e-mail sent' just after recording it: the database can say so a moment before its log line is read.
    await expect.poll(() => sentBy(a) + sentBy(b)).toBe(figures.emails);
    report('two-of-every-role', { ...figures, sent_by_a: sentBy(a), sent_by_b: sentBy(b), ingest: stream.outcomes });

    expect(stream.accepted.size).toBe(EVENTS);
    expectDeliveredOnce(figures);
    // Both did the work: this is not one process idling.
    expect(sentBy(a)).toBeGreaterThan(0);
    expect(sentBy(b)).toBeGreaterThan(0);
  }, scale(120_000, 600_000));
});
