import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_TOKEN } from '../support/app';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/processes';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import { processEnv } from './support/services';
import { prepareStream, report, scale, sendStream, settle, storedEvents, tally, type StreamSetup } from './support/stream';

const EVENTS = scale(300, 3000);

describe('fault: two processes of every role at once, on the same Redis and database', () => {
  let smtp: TestSmtpServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let setup: StreamSetup;
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer({ acceptDelayMs: 2 });
    db = await createTestDatabase();
    setup = await prepareStream(db, { events: EVENTS, tag: 'twice' });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await db.drop();
    await smtp.close();
  });

  it('sends each e-mail once, whichever process takes each step', async () => {
    const env = processEnv(db, { smtpUrl: smtp.url });
    processes.push(...(await Promise.all([spawnServer(env), spawnServer(env)])));
    const [a, b] = processes as [ServerProcess, ServerProcess];

    // Requests alternate between the two APIs.
    const stream = await sendStream((request) => (request % 2 ? a : b).baseUrl!, INGEST_TOKEN, setup.events);
    const stored = await storedEvents(db);
    const figures = await settle(() => tally(setup, stored, smtp.received), scale(60_000, 180_000));
    const sentBy = (p: ServerProcess) => p.lines.filter((line) => line.msg === 'e-mail sent').length;
    report('two-of-every-role', { ...figures, sent_by_a: sentBy(a), sent_by_b: sentBy(b), ingest: stream.outcomes });

    expect(stream.accepted.size).toBe(EVENTS);
    expect(figures.missing).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.retransmitted).toBe(0);
    expect(figures.unexpected).toBe(0);
    // Both did the work: this is not one process idling.
    expect(sentBy(a)).toBeGreaterThan(0);
    expect(sentBy(b)).toBeGreaterThan(0);
    expect(sentBy(a) + sentBy(b)).toBe(figures.emails);
  }, scale(120_000, 600_000));
});
