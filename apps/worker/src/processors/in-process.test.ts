import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery, Transaction, UnmatchedEvent } from '@notify/db';
import type { DuePeriod, MatchResult } from '@notify/pipeline';
import { createLogger } from '@notify/observability';
import { InProcessDelivery } from './deliver-here';
import { InProcessMatching } from './match-here';
import { InProcessSending } from './send-here';

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

/** A match that finishes when the test says so. */
function heldMatch() {
  const calls: Array<{ events: number; finish: (error?: Error) => void }> = [];
  const match = (events: ReadonlyArray<readonly [string, string]>) =>
    new Promise<MatchResult>((resolve, reject) => {
      calls.push({ events: events.length, finish: (error) => (error ? reject(error) : resolve(RESULT)) });
    });
  return { calls, match };
}

const pairs = (n: number): Array<[string, string]> => Array.from({ length: n }, (_, i) => ['org', `event-${i}`]);

describe('InProcessMatching', () => {
  it('takes events up to its bound and declines past it, so the queues take the rest', async () => {
    const { calls, match } = heldMatch();
    const here = new InProcessMatching(match, capturedLogger().logger, 10);
    expect(here.take('new_open_port_detected', pairs(6))).toBe(true);
    expect(here.take('asset_dns_changed', pairs(4))).toBe(true);
    expect(here.take('asset_dns_changed', pairs(1))).toBe(false);
    expect(here.pending).toBe(10);
    expect(calls.map((call) => call.events)).toEqual([6, 4]);

    calls[0]!.finish();
    await expect.poll(() => here.pending).toBe(4);
    expect(here.take('asset_dns_changed', pairs(6))).toBe(true);
  });

  it('logs a failed match and frees its place: the events stay unmatched in the database for the reconciler', async () => {
    const { calls, match } = heldMatch();
    const { lines, logger } = capturedLogger();
    const here = new InProcessMatching(match, logger, 10);
    expect(here.take('new_open_port_detected', pairs(3))).toBe(true);
    calls[0]!.finish(new Error('connection terminated'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = lines.find((line) => line.level === 40)!;
    expect(warning).toMatchObject({ scope: 'new_open_port_detected', events: 3, msg: expect.stringContaining('reconciler') });
    expect(JSON.stringify(warning.err)).toContain('connection terminated');
  });

  it('on close, takes nothing more and waits for what it took', async () => {
    const { calls, match } = heldMatch();
    const here = new InProcessMatching(match, capturedLogger().logger, 10);
    here.take('new_open_port_detected', pairs(2));
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    expect(here.take('new_open_port_detected', pairs(1))).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    calls[0]!.finish();
    await closing;
    expect(here.pending).toBe(0);
  });

  describe('inStore: matching in the transaction that stores the events', () => {
    /** matchStoredEvents as the store transaction calls it, whose after-commit work finishes when the test says so. */
    function heldStored() {
      const finishes: Array<(error?: Error) => void> = [];
      const at = new Date('2026-11-29T09:00:00Z');
      const stored = {
        now: () => at,
        match: async () => () =>
          new Promise<MatchResult>((resolve, reject) => {
            finishes.push((error) => (error ? reject(error) : resolve(RESULT)));
          }),
      };
      return { finishes, stored, at };
    }
    const tx = {} as Transaction;
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `event-${i}` }) as UnmatchedEvent);

    it('is there only when given matchStoredEvents, with its clock', () => {
      expect(new InProcessMatching(heldMatch().match, capturedLogger().logger, 10).inStore).toBeUndefined();
      const { stored, at } = heldStored();
      expect(new InProcessMatching(heldMatch().match, capturedLogger().logger, 10, stored).inStore!.now()).toEqual(at);
    });

    it('runs what follows the commit in the background, counted as pending, and close waits for it and closes inStore', async () => {
      const { finishes, stored } = heldStored();
      const here = new InProcessMatching(heldMatch().match, capturedLogger().logger, 10, stored);
      const inStore = here.inStore!;
      expect(inStore.open()).toBe(true);
      const committed = await inStore.match(tx, events(3), new Date());
      // Nothing runs before the commit.
      expect([finishes.length, here.pending]).toEqual([0, 0]);
      committed();
      expect([finishes.length, here.pending]).toEqual([1, 3]);
      let closed = false;
      const closing = here.close().then(() => {
        closed = true;
      });
      expect(inStore.open()).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(closed).toBe(false);
      finishes[0]!();
      await closing;
      expect(here.pending).toBe(0);
    });

    it('logs what failed: the match in the store transaction (stored alone then), or sending after its commit (the reconciler sends it)', async () => {
      const { finishes, stored } = heldStored();
      const { lines, logger } = capturedLogger();
      const here = new InProcessMatching(heldMatch().match, logger, 10, stored);
      here.inStore!.failed(new Error('deadlock detected'), 2);
      (await here.inStore!.match(tx, events(1), new Date()))();
      finishes[0]!(new Error('Connection is closed.'));
      await expect.poll(() => here.pending).toBe(0);
      const warnings = lines.filter((line) => line.level === 40);
      expect(warnings).toMatchObject([
        { events: 2, msg: expect.stringContaining('stored alone') },
        { events: 1, msg: expect.stringContaining('reconciler') },
      ]);
      expect(JSON.stringify(warnings.map((warning) => warning.err))).toMatch(/deadlock detected.*Connection is closed/);
    });
  });
});

/** A delivery that finishes when the test says so. */
function heldDelivery() {
  const calls: Array<{ periods: string[]; finish: (error?: Error) => void }> = [];
  const deliver = (periods: readonly DuePeriod[]) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ periods: periods.map((p) => p.periodKey), finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { calls, deliver };
}

const due = (...keys: string[]): DuePeriod[] => keys.map((periodKey) => ({ ruleId: 'rule', periodKey }));

describe('InProcessDelivery', () => {
  it('takes due periods up to its bound, never one already on its way, and declines the rest for deliver jobs', async () => {
    const { calls, deliver } = heldDelivery();
    const here = new InProcessDelivery(deliver, capturedLogger().logger, 3);
    expect(here.take(due('a', 'b'))).toEqual([]);
    // The next tick finds a and b due still: they are not taken twice; d is past the bound.
    expect(here.take(due('a', 'b', 'c', 'd'))).toEqual(due('d'));
    expect(calls.map((call) => call.periods)).toEqual([['a', 'b'], ['c']]);
    expect(here.pending).toBe(3);

    calls[0]!.finish();
    await expect.poll(() => here.pending).toBe(1);
    expect(here.take(due('a', 'c', 'd'))).toEqual([]);
    expect(calls.map((call) => call.periods)).toEqual([['a', 'b'], ['c'], ['a', 'd']]);
  });

  it('logs a failed delivery and frees its periods: still due, the next tick finds them again', async () => {
    const { calls, deliver } = heldDelivery();
    const { lines, logger } = capturedLogger();
    const here = new InProcessDelivery(deliver, logger, 10);
    here.take(due('a', 'b'));
    calls[0]!.finish(new Error('connection terminated'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = lines.find((line) => line.level === 40)!;
    expect(warning).toMatchObject({ periods: 2, msg: expect.stringContaining('next tick') });
    expect(here.take(due('a'))).toEqual([]);
    expect(calls).toHaveLength(2);
  });

  it('says when what it took is settled whether the schedule stage may read the next page: not after a failure, nor once closing', async () => {
    const { calls, deliver } = heldDelivery();
    const here = new InProcessDelivery(deliver, capturedLogger().logger, 10);
    here.take(due('a'));
    here.take(due('b'));
    let settled: boolean | undefined;
    const settling = here.settled().then((ok) => {
      settled = ok;
    });
    calls[0]!.finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // It waits for every period taken, not the first.
    expect(settled).toBeUndefined();
    calls[1]!.finish();
    await settling;
    expect(settled).toBe(true);

    here.take(due('c'));
    here.take(due('d'));
    calls[2]!.finish(new Error('connection terminated'));
    calls[3]!.finish();
    expect(await here.settled()).toBe(false);
    // A failure counts once: the next tick's pages go on.
    expect(await here.settled()).toBe(true);

    here.take(due('e'));
    const closing = here.close();
    calls[4]!.finish();
    expect(await here.settled()).toBe(false);
    await closing;
  });

  it('on close, declines everything and waits for what it took', async () => {
    const { calls, deliver } = heldDelivery();
    const here = new InProcessDelivery(deliver, capturedLogger().logger, 10);
    here.take(due('a'));
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    expect(here.take(due('b'))).toEqual(due('b'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    calls[0]!.finish();
    await closing;
    expect(here.pending).toBe(0);
  });
});

/** A send that finishes when the test says so. */
function heldSend() {
  const calls: Array<{ deliveries: readonly string[]; stopping: () => boolean; claimed?: ReadonlyMap<string, ClaimedDelivery>; finish: (error?: Error) => void }> = [];
  const send = (deliveries: readonly string[], _log: unknown, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ deliveries, stopping, claimed, finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { calls, send };
}

describe('InProcessSending', () => {
  it('takes deliveries up to its bound and declines the rest for the send queue', async () => {
    const { calls, send } = heldSend();
    const here = new InProcessSending(send, capturedLogger().logger, undefined, 3);
    expect(here.take(['a', 'b'])).toEqual([]);
    expect(here.take(['c', 'd', 'e'])).toEqual(['d', 'e']);
    expect(here.take(['f'])).toEqual(['f']);
    expect(calls.map((call) => call.deliveries)).toEqual([['a', 'b'], ['c']]);
    expect(here.pending).toBe(3);

    calls[0]!.finish();
    await expect.poll(() => here.pending).toBe(1);
    expect(here.take(['g'])).toEqual([]);
  });

  it('says how many deliveries it takes now, and hands on those made claimed for it', async () => {
    const { calls, send } = heldSend();
    const pause = { active: false };
    const here = new InProcessSending(send, capturedLogger().logger, pause, 3);
    expect(here.room()).toBe(3);
    const claimed = new Map([['a', { id: 'a' } as ClaimedDelivery]]);
    expect(here.take(['a', 'b'], claimed)).toEqual([]);
    expect(calls[0]!.claimed).toBe(claimed);
    expect(here.room()).toBe(1);
    calls[0]!.finish();
    await expect.poll(() => here.room()).toBe(3);
    // Paused or closing: none, so a statement about to make deliveries makes none claimed for it.
    pause.active = true;
    expect(here.room()).toBe(0);
    pause.active = false;
    await here.close();
    expect(here.room()).toBe(0);
  });

  it('declines everything while sending is paused (the SMTP server away): the paused queue holds them', () => {
    const { calls, send } = heldSend();
    const pause = { active: true };
    const here = new InProcessSending(send, capturedLogger().logger, pause, 10);
    expect(here.take(['a', 'b'])).toEqual(['a', 'b']);
    expect(calls).toHaveLength(0);
    pause.active = false;
    expect(here.take(['a', 'b'])).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it('logs a failed send and frees its place: the deliveries stay pending in the database for the reconciler', async () => {
    const { calls, send } = heldSend();
    const { lines, logger } = capturedLogger();
    const here = new InProcessSending(send, logger, undefined, 10);
    here.take(['a', 'b']);
    calls[0]!.finish(new Error('Redis away'));
    await expect.poll(() => here.pending).toBe(0);
    const warning = lines.find((line) => line.level === 40)!;
    expect(warning).toMatchObject({ deliveries: 2, msg: expect.stringContaining('reconciler') });
    expect(JSON.stringify(warning.err)).toContain('Redis away');
  });

  it('on close, declines everything, tells what it took to start nothing more, and waits for it', async () => {
    const { calls, send } = heldSend();
    const here = new InProcessSending(send, capturedLogger().logger, undefined, 10);
    here.take(['a']);
    expect(calls[0]!.stopping()).toBe(false);
    let closed = false;
    const closing = here.close().then(() => {
      closed = true;
    });
    expect(here.take(['b'])).toEqual(['b']);
    // What it has not started goes to the send queue, for the next process.
    expect(calls[0]!.stopping()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    calls[0]!.finish();
    await closing;
    expect(here.pending).toBe(0);
  });
});
