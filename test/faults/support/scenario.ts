import { afterAll, beforeAll, expect } from 'vitest';
import { startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from '@notify/mail/testing';
import { createTestDatabase } from '../../support/database';
import { spawnServer, type ServerProcess } from '../../support/processes';
import { prepareStream, type StreamOptions, type StreamSetup, type Tally } from './stream';

/** What a delivery fault scenario works with; filled in before its test runs. */
export interface Scenario {
  smtp: TestSmtpServer;
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  setup: StreamSetup;
  /** Starts a process (`npm start`'s entry point); killed after the scenario. */
  spawn(env: Record<string, string>): Promise<ServerProcess>;
}

/**
 * Registers a scenario's lifecycle: a real SMTP server, a database schema of its own and the known
 * stream's organization and rules before; every process it started killed, and all of it gone, after.
 * `around` adds the scenario's own fault equipment (a relay, a private Redis) on both sides.
 */
export function useScenario(options: StreamOptions & { smtp?: SmtpServerOptions; around?: { before?(): Promise<void>; after?(): Promise<void> } }): Scenario {
  const processes: ServerProcess[] = [];
  const scenario = {
    async spawn(env: Record<string, string>) {
      const started = await spawnServer(env);
      processes.push(started);
      return started;
    },
  } as Scenario;
  beforeAll(async () => {
    scenario.smtp = await startSmtpServer(options.smtp);
    await options.around?.before?.();
    scenario.db = await createTestDatabase();
    scenario.setup = await prepareStream(scenario.db, options);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await options.around?.after?.();
    await scenario.db?.drop();
    await scenario.smtp?.close();
  });
  return scenario;
}

/**
 * Nothing missing, nothing in two e-mails, nothing nobody owed. `retransmittedAtMost`: how many
 * e-mails may have gone twice with the same Message-ID (a send cut off between the server's 250 and
 * its record); none unless the scenario cuts sends off.
 */
export function expectDeliveredOnce(figures: Tally, options: { retransmittedAtMost?: number } = {}): void {
  expect(figures.missing).toBe(0);
  expect(figures.duplicated).toBe(0);
  expect(figures.unexpected).toBe(0);
  expect(figures.retransmitted).toBeLessThanOrEqual(options.retransmittedAtMost ?? 0);
}
