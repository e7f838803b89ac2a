import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { releaseDeliveries, type ClaimedDelivery, type Transaction, type UnmatchedEvent } from '@notify/db';
import { createLogger } from '@notify/observability';
import type { DeliverStage, DuePeriod } from '../deliver/deliver-stage';
import type { MatchResult, MatchStage } from '../match/match-stage';
import { CLAIM_AHEAD, EVENTS_PER_MAIL, type SendStage } from '../send/send-stage';
import { DeliverInProcess, type ToDeliver } from './to-deliver';
import { MatchInProcess, type ToMatch } from './to-match';
import { SendInProcess } from './to-send';

// Claimed deliveries SendInProcess declines are given back in the database: recorded here instead.
vi.mock('@notify/db', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@notify/db')>()),
  releaseDeliveries: vi.fn(async () => {}),
}));

const RESULT: MatchResult = { events: 1, matches: 1, silenced: 0, immediate: 1 };

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', name: 'test', destination }) };
}

const warningsOf = (lines: ReadonlyArray<Record<string, unknown>>) => lines.filter((line) => line.level === 40);

/** Lets the work that finished settle, so the test sees it still waiting when it waits. */
const aWhile = () => new Promise((resolve) => setTimeout(resolve, 20));

const pairs = (n: number): Array<[string, string]> => Array.from({ length: n }, (_, i) => ['org', `event-${i}`]);

/** A match stage whose matches, and what follows a stored match's commit, finish when the test says so. */
function heldMatchStage() {
  const calls: Array<{ events: number; finish: (error?: Error) => void }> = [];
  const stored: Array<{ tx: Transaction; events: number; now: Date }> = [];
  const finishes: Array<(error?: Error) => void> = [];
  const at = new Date('2026-11-29T09:00:00Z');
  const held = () =>
    new Promise<MatchResult>((resolve, reject) => {
      finishes.push((error) => (error ? reject(error) : resolve(RESULT)));
    });
  const stage = {
    now: () => at,
    match: (events: ReadonlyArray<readonly [string, string]>) =>
      new Promise<MatchResult>((resolve, reject) => {
        calls.push({ events: events.length, finish: (error) => (error ? reject(error) : resolve(RESULT)) });
      }),
    matchStored: async (tx: Transaction, events: UnmatchedEvent[], now: Date) => {
      stored.push({ tx, events: events.length, now });
      return held;
    },
  } as unknown as MatchStage;
  return { calls, stored, finishes, at, stage };
}

/** The match queues, recording what they are handed. */
function recordingMatchQueue() {
  const handed: Array<{ scope: string; events: number }> = [];
  const queue: ToMatch = {
    hand: async (scope, events) => {
      handed.push({ scope, events: events.length });
    },
  };
  return { handed, queue };
}

describe('MatchInProcess', () => {
  it('takes events up to its bound and hands those past it to the queues', async () => {
    const { calls, stage } = heldMatchStage();
    const { handed, queue } = recordingMatchQueue();
    const here = new MatchInProcess(stage, queue, { matchInStore: false, log: capturedLogger().logger, maxEvents: 10 });
    await here.hand('new_open_port_detected', pairs(6));
    await here.hand('asset_dns_changed', pairs(4));
    await here.hand('asset_dns_changed', pairs(1));
    expect(handed).toEqual([{ scope: 'asset_dns_changed', events: 1 }]);
    expect(here.pending).toBe(10);
    expect(calls.map((call) => call.events)).toEqual([6, 4]);

    calls[0]!.finish();
    await expect.poll(() => here.pending).toBe(4);
    await here.hand('asset_dns_changed', pairs(6));
    expect(handed).toHaveLength(1);
    expect(calls.map((call) => call.events)).toEqual([6, 4, 6]);
  });

  it('logs a failed match and frees its place: the events stay unmatched in the database for the reconciler', async () => {
    const { calls, stage } = heldMatchStage();
    const { handed, queue } = recordingMatchQueue();
    const { lines, logger } = capturedLogger();
    const here = new MatchInProcess(stage, queue, { matchInStore: false, log: logger, maxEvents: 10 });
    await here.hand('new_open_port_detected', pairs(3));
    calls[0]!.finish(new Error('connection terminated'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = warningsOf(lines)[0]!;
    expect(warning).toMatchObject({ scope: 'new_open_port_detected', events: 3, msg: expect.stringContaining('reconciler') });
    expect(JSON.stringify(warning.err)).toContain('connection terminated');
    expect(handed).toEqual([]);
  });

  it('on close, hands everything to the queues and waits for what it took', async () => {
    const { calls, stage } = heldMatchStage();
    const { handed, queue } = recordingMatchQueue();
    const here = new MatchInProcess(stage, queue, { matchInStore: false, log: capturedLogger().logger, maxEvents: 10 });
    await here.hand('new_open_port_detected', pairs(2));
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    await here.hand('new_open_port_detected', pairs(1));
    expect(handed).toEqual([{ scope: 'new_open_port_detected', events: 1 }]);
    expect(calls).toHaveLength(1);
    await aWhile();
    expect(closed).toBe(false);
    calls[0]!.finish();
    await closing;
    expect(here.pending).toBe(0);
  });

  describe('inStore: matching in the transaction that stores the events', () => {
    const tx = {} as Transaction;
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `event-${i}` }) as UnmatchedEvent);

    it('is there only with matchInStore on, with the stage clock', () => {
      const { stage, at } = heldMatchStage();
      const { queue } = recordingMatchQueue();
      const { logger } = capturedLogger();
      expect(new MatchInProcess(stage, queue, { matchInStore: false, log: logger }).inStore).toBeUndefined();
      expect(new MatchInProcess(stage, queue, { matchInStore: true, log: logger }).inStore!.now()).toBe(at);
    });

    it('runs what follows the commit in the background, counted as pending, and close waits for it and closes inStore', async () => {
      const { finishes, stored, stage } = heldMatchStage();
      const here = new MatchInProcess(stage, recordingMatchQueue().queue, { matchInStore: true, log: capturedLogger().logger, maxEvents: 10 });
      const inStore = here.inStore!;
      expect(inStore.open()).toBe(true);
      const now = new Date('2026-11-29T09:00:01Z');
      const committed = await inStore.match(tx, events(3), now);
      // Matched in the store transaction, at its instant; nothing runs before the commit.
      expect(stored).toEqual([{ tx, events: 3, now }]);
      expect([finishes.length, here.pending]).toEqual([0, 0]);
      committed();
      expect([finishes.length, here.pending]).toEqual([1, 3]);
      let closed = false;
      const closing = here.close().then(() => {
        closed = true;
      });
      expect(inStore.open()).toBe(false);
      await aWhile();
      expect(closed).toBe(false);
      finishes[0]!();
      await closing;
      expect(here.pending).toBe(0);
    });

    it('logs what failed: the match in the store transaction (stored alone then), or sending after its commit (the reconciler sends it)', async () => {
      const { finishes, stage } = heldMatchStage();
      const { lines, logger } = capturedLogger();
      const here = new MatchInProcess(stage, recordingMatchQueue().queue, { matchInStore: true, log: logger, maxEvents: 10 });
      here.inStore!.failed(new Error('deadlock detected'), 2);
      (await here.inStore!.match(tx, events(1), new Date()))();
      finishes[0]!(new Error('Connection is closed.'));
      await expect.poll(() => here.pending).toBe(0);
      const warnings = warningsOf(lines);
      expect(warnings).toMatchObject([
        { events: 2, msg: expect.stringContaining('stored alone') },
        { events: 1, msg: expect.stringContaining('reconciler') },
      ]);
      expect(JSON.stringify(warnings.map((warning) => warning.err))).toMatch(/deadlock detected.*Connection is closed/);
    });
  });
});

/** A deliver stage whose deliveries, one per period, finish when the test says so. */
function heldDeliverStage() {
  const calls: Array<{ period: string; finish: (error?: Error) => void }> = [];
  const stage = {
    deliver: (period: DuePeriod) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ period: period.periodKey, finish: (error) => (error ? reject(error) : resolve()) });
      }),
  } as unknown as DeliverStage;
  /** Finishes the latest delivery of each of `periods`. */
  const finish = (periods: readonly string[], error?: Error) => {
    for (const period of periods) calls.findLast((call) => call.period === period)!.finish(error);
  };
  return { calls, finish, stage };
}

/** Deliver jobs, recording the periods they are handed. */
function recordingDeliverQueue() {
  const handed: string[] = [];
  const queue: ToDeliver = {
    hand: async (periods) => {
      handed.push(...periods.map((period) => period.periodKey));
    },
    settled: async () => false,
  };
  return { handed, queue };
}

const due = (...keys: string[]): DuePeriod[] => keys.map((periodKey) => ({ ruleId: 'rule', periodKey }));

describe('DeliverInProcess', () => {
  it('takes due periods up to its bound, never one already on its way, and hands the rest to deliver jobs', async () => {
    const { calls, finish, stage } = heldDeliverStage();
    const { handed, queue } = recordingDeliverQueue();
    const here = new DeliverInProcess(stage, queue, { log: capturedLogger().logger, maxPeriods: 3 });
    await here.hand(due('a', 'b'));
    expect(handed).toEqual([]);
    // The next tick finds a and b due still: they are not taken twice; d is past the bound.
    await here.hand(due('a', 'b', 'c', 'd'));
    expect(handed).toEqual(['d']);
    expect(calls.map((call) => call.period)).toEqual(['a', 'b', 'c']);
    expect(here.pending).toBe(3);

    finish(['a', 'b']);
    await expect.poll(() => here.pending).toBe(1);
    await here.hand(due('a', 'c', 'd'));
    expect(handed).toEqual(['d']);
    expect(calls.map((call) => call.period)).toEqual(['a', 'b', 'c', 'a', 'd']);
  });

  it('logs a failed delivery and frees its periods: still due, the next tick finds them again', async () => {
    const { calls, finish, stage } = heldDeliverStage();
    const { handed, queue } = recordingDeliverQueue();
    const { lines, logger } = capturedLogger();
    const here = new DeliverInProcess(stage, queue, { log: logger, maxPeriods: 10 });
    await here.hand(due('a', 'b'));
    finish(['a', 'b'], new Error('connection terminated'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = warningsOf(lines)[0]!;
    expect(warning).toMatchObject({ periods: 2, msg: expect.stringContaining('next tick') });
    expect(JSON.stringify(warning.err)).toContain('connection terminated');
    await here.hand(due('a'));
    expect(calls).toHaveLength(3);
    expect(handed).toEqual([]);
  });

  it('says when what it took is settled whether the schedule stage may read the next page: not after a failure, nor once closing', async () => {
    const { finish, stage } = heldDeliverStage();
    const here = new DeliverInProcess(stage, recordingDeliverQueue().queue, { log: capturedLogger().logger, maxPeriods: 10 });
    await here.hand(due('a'));
    await here.hand(due('b'));
    let settled: boolean | undefined;
    const settling = here.settled().then((ok) => {
      settled = ok;
    });
    finish(['a']);
    await aWhile();
    // It waits for every period taken, not the first.
    expect(settled).toBeUndefined();
    finish(['b']);
    await settling;
    expect(settled).toBe(true);

    await here.hand(due('c'));
    await here.hand(due('d'));
    finish(['c'], new Error('connection terminated'));
    finish(['d']);
    expect(await here.settled()).toBe(false);
    // A failure counts once: the next tick's pages go on.
    expect(await here.settled()).toBe(true);

    await here.hand(due('e'));
    const closing = here.close();
    finish(['e']);
    expect(await here.settled()).toBe(false);
    await closing;
  });

  it('on close, hands everything to deliver jobs and waits for what it took', async () => {
    const { calls, finish, stage } = heldDeliverStage();
    const { handed, queue } = recordingDeliverQueue();
    const here = new DeliverInProcess(stage, queue, { log: capturedLogger().logger, maxPeriods: 10 });
    await here.hand(due('a'));
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    await here.hand(due('b'));
    expect(handed).toEqual(['b']);
    expect(calls).toHaveLength(1);
    await aWhile();
    expect(closed).toBe(false);
    finish(['a']);
    await closing;
    expect(here.pending).toBe(0);
  });
});

/** A send stage whose first attempts finish when the test says so, with the send queue recording what it is asked for. */
function heldSend(pause?: { active: boolean }) {
  const calls: Array<{ deliveries: readonly string[]; stopping: () => boolean; claimed?: ReadonlyMap<string, ClaimedDelivery>; finish: (error?: Error) => void }> = [];
  const stage = {
    pause,
    sendFirstAttempt: (deliveries: readonly string[], _log: unknown, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ deliveries, stopping, claimed, finish: (error) => (error ? reject(error) : resolve()) });
      }),
  } as unknown as SendStage;
  const queued: string[] = [];
  const resources = {
    db: {} as never,
    queues: {
      requestSend: async (ids: readonly string[]) => {
        queued.push(...ids);
      },
    } as never,
  };
  return { calls, queued, resources, stage };
}

const claimedOnes = (...ids: string[]) => ids.map((id) => ({ id }) as ClaimedDelivery);

describe('SendInProcess', () => {
  it('takes deliveries up to its bound and hands the rest to the send queue', async () => {
    const { calls, queued, resources, stage } = heldSend();
    const here = new SendInProcess(resources, stage, { claimWhenMade: false, log: capturedLogger().logger, maxDeliveries: 3 });
    await here.hand(['a', 'b']);
    expect(queued).toEqual([]);
    await here.hand(['c', 'd', 'e']);
    expect(queued).toEqual(['d', 'e']);
    await here.hand(['f']);
    expect(queued).toEqual(['d', 'e', 'f']);
    expect(calls.map((call) => call.deliveries)).toEqual([['a', 'b'], ['c']]);
    expect(here.pending).toBe(3);

    calls[0]!.finish();
    await expect.poll(() => here.pending).toBe(1);
    await here.hand(['g']);
    expect(queued).toEqual(['d', 'e', 'f']);
    expect(calls.map((call) => call.deliveries)).toEqual([['a', 'b'], ['c'], ['g']]);
  });

  it('says how many deliveries it takes now, and hands on those made claimed for it', async () => {
    const pause = { active: false };
    const { calls, queued, resources, stage } = heldSend(pause);
    const here = new SendInProcess(resources, stage, { claimWhenMade: true, log: capturedLogger().logger, maxDeliveries: 3 });
    expect(here.room()).toBe(3);
    expect(here.claims()).toEqual({ claimUpTo: 3, eventLimit: EVENTS_PER_MAIL });
    // The claimed ones first.
    await here.hand(['b', 'a'], claimedOnes('a'));
    expect(calls[0]!.deliveries).toEqual(['a', 'b']);
    expect(calls[0]!.claimed).toEqual(new Map([['a', { id: 'a' }]]));
    expect(queued).toEqual([]);
    expect(here.room()).toBe(1);
    expect(here.claims().claimUpTo).toBe(1);
    calls[0]!.finish();
    await expect.poll(() => here.room()).toBe(3);
    // Paused or closing: none, so a statement about to make deliveries makes none claimed for it.
    pause.active = true;
    expect(here.room()).toBe(0);
    expect(here.claims().claimUpTo).toBe(0);
    pause.active = false;
    await here.close();
    expect(here.room()).toBe(0);
    expect(here.claims().claimUpTo).toBe(0);
  });

  it('asks for no more claimed than one claim statement takes, and none without claimWhenMade', () => {
    const { resources, stage } = heldSend();
    const { logger } = capturedLogger();
    expect(new SendInProcess(resources, stage, { claimWhenMade: true, log: logger, maxDeliveries: 1000 }).claims().claimUpTo).toBe(CLAIM_AHEAD);
    expect(new SendInProcess(resources, stage, { claimWhenMade: false, log: logger, maxDeliveries: 1000 }).claims().claimUpTo).toBe(0);
  });

  it('gives back the claimed ones it has no room for before the send queue gets them', async () => {
    const order: string[] = [];
    vi.mocked(releaseDeliveries).mockImplementationOnce(async (_db, ids) => {
      order.push(`released ${ids.join(',')}`);
    });
    const { calls, resources, stage } = heldSend();
    const requestSend = async (ids: readonly string[]) => {
      order.push(`queued ${ids.join(',')}`);
    };
    const here = new SendInProcess({ ...resources, queues: { requestSend } as never }, stage, { claimWhenMade: true, log: capturedLogger().logger, maxDeliveries: 1 });
    await here.hand(['a', 'b', 'c'], claimedOnes('b', 'c'));
    expect(calls.map((call) => call.deliveries)).toEqual([['b']]);
    expect(order).toEqual(['released c', 'queued c,a']);
    expect(vi.mocked(releaseDeliveries)).toHaveBeenLastCalledWith(resources.db, ['c']);
  });

  it('hands everything to the send queue while sending is paused (the SMTP server away): the paused queue holds them', async () => {
    const pause = { active: true };
    const { calls, queued, resources, stage } = heldSend(pause);
    const here = new SendInProcess(resources, stage, { claimWhenMade: false, log: capturedLogger().logger, maxDeliveries: 10 });
    await here.hand(['a', 'b']);
    expect(queued).toEqual(['a', 'b']);
    expect(calls).toHaveLength(0);
    pause.active = false;
    await here.hand(['c', 'd']);
    expect(queued).toEqual(['a', 'b']);
    expect(calls).toHaveLength(1);
  });

  it('logs a failed send and frees its place: the deliveries stay pending in the database for the reconciler', async () => {
    const { calls, queued, resources, stage } = heldSend();
    const { lines, logger } = capturedLogger();
    const here = new SendInProcess(resources, stage, { claimWhenMade: false, log: logger, maxDeliveries: 10 });
    await here.hand(['a', 'b']);
    calls[0]!.finish(new Error('Redis away'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = warningsOf(lines)[0]!;
    expect(warning).toMatchObject({ deliveries: 2, msg: expect.stringContaining('reconciler') });
    expect(JSON.stringify(warning.err)).toContain('Redis away');
    expect(queued).toEqual([]);
  });

  it('on close, hands everything to the send queue, tells what it took to start nothing more, and waits for it', async () => {
    const { calls, queued, resources, stage } = heldSend();
    const here = new SendInProcess(resources, stage, { claimWhenMade: false, log: capturedLogger().logger, maxDeliveries: 10 });
    await here.hand(['a']);
    expect(calls[0]!.stopping()).toBe(false);
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    await here.hand(['b']);
    expect(queued).toEqual(['b']);
    expect(calls).toHaveLength(1);
    // What it has not started goes to the send queue, for the next process.
    expect(calls[0]!.stopping()).toBe(true);
    await aWhile();
    expect(closed).toBe(false);
    calls[0]!.finish();
    await closing;
    expect(here.pending).toBe(0);
  });
});
