import type pg from 'pg';
import { expect, vi } from 'vitest';

/**
 * A real pause, only where time itself must pass: a rate-limit window, an outage's length, the
 * pace of a stream of requests. To wait for something to happen, poll for it instead
 * (expect.poll, vi.waitFor, waitUntilSettled), which returns as soon as it has happened.
 */
export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface PipelineBacklog {
  /** Stored events the matcher has not evaluated yet. */
  unmatchedEvents: number;
  /** Matches of instant rules still waiting for their e-mail (a burst window not yet over; not those quiet hours hold). */
  instantMatchesPending: number;
  /** E-mails not yet accepted or given up on. */
  deliveriesUnsent: number;
}

const NOTHING_LEFT: PipelineBacklog = { unmatchedEvents: 0, instantMatchesPending: 0, deliveriesUnsent: 0 };

export async function pipelineBacklog(pool: pg.Pool): Promise<PipelineBacklog> {
  const { rows } = await pool.query<PipelineBacklog>(
    `SELECT (SELECT count(*) FROM events WHERE matched_at IS NULL)::int AS "unmatchedEvents",
            (SELECT count(*) FROM matches m JOIN notification_rules r ON r.id = m.rule_id
              WHERE m.status = 'pending' AND r.frequency = 'instant' AND m.period_key NOT LIKE 'q%')::int AS "instantMatchesPending",
            (SELECT count(*) FROM deliveries WHERE status IN ('pending', 'sending'))::int AS "deliveriesUnsent"`,
  );
  return rows[0]!;
}

/**
 * Waits until the pipeline of this database has nothing left to do: every stored event matched,
 * no instant match waiting, every delivery sent, failed or cancelled. From then on an e-mail that
 * has not arrived is not on its way (digest matches wait for their period, and matches quiet hours
 * hold for their end, which tests set off themselves), so "nothing more arrived" can be asserted at once instead of after a pause.
 */
export async function waitUntilSettled(db: { pool: pg.Pool }, timeoutMs = 10_000): Promise<void> {
  // vi.waitFor rather than expect.poll, which refuses to run in beforeAll.
  await vi.waitFor(async () => expect(await pipelineBacklog(db.pool), 'what the pipeline has left to do').toEqual(NOTHING_LEFT), { timeout: timeoutMs, interval: 25 });
}
