import { afterEach, describe, expect, it, vi } from 'vitest';
import { Batcher, LINGER_MISSES, LINGER_PROBE_MS } from './batcher';

/** A batch function that records the batches it was given and waits for the test to end each. */
function recording<I>() {
  const batches: I[][] = [];
  const ends: Array<() => void> = [];
  const run = async (items: I[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => ends.push(resolve));
    return items.map((item) => `done ${String(item)}`);
  };
  return { batches, ends, run };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('runs a lone call at once, and gathers the calls made while a batch runs into the next', async () => {
    const { batches, ends, run } = recording<number>();
    const batcher = new Batcher(run, { maxBatch: 10, concurrency: 1 });
    const first = batcher.submit(1);
    await turn();
    expect(batches).toEqual([[1]]);
    const later = [2, 3, 4].map((n) => batcher.submit(n));
    await turn();
    expect(batches).toEqual([[1]]);
    expect(batcher.waiting).toBe(3);
    ends[0]!();
    await expect(first).resolves.toBe('done 1');
    await turn();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    ends[1]!();
    await expect(Promise.all(later)).resolves.toEqual(['done 2', 'done 3', 'done 4']);
  });

  it('bounds a batch by the weight of its items, and runs up to `concurrency` batches at once', async () => {
    const { batches, ends, run } = recording<number>();
    const batcher = new Batcher(run, { maxBatch: 5, concurrency: 2, weight: (n) => n });
    const all = [3, 2, 4, 9, 1].map((n) => batcher.submit(n));
    await turn();
    // 3+2 fill the first batch, 4 starts the second; 9 is heavier than a batch and waits to go alone.
    expect(batches).toEqual([[3, 2], [4]]);
    ends[0]!();
    await turn();
    expect(batches).toEqual([[3, 2], [4], [9]]);
    ends[1]!();
    await turn();
    expect(batches).toEqual([[3, 2], [4], [9], [1]]);
    ends[2]!();
    ends[3]!();
    await expect(Promise.all(all)).resolves.toEqual(['done 3', 'done 2', 'done 4', 'done 9', 'done 1']);
  });

  it('tries a failed batch one call at a time, so only the bad call fails', async () => {
    const seen: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        seen.push(items);
        if (items.includes(13)) throw new Error('unlucky');
        return items.map((n) => n * 2);
      },
      { maxBatch: 10, concurrency: 1 },
    );
    const results = await Promise.allSettled([1, 13, 2].map((n) => batcher.submit(n)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([2, 'unlucky', 4]);
    expect(seen).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('fails the calls of a batch that gives the wrong number of results, one by one', async () => {
    const batcher = new Batcher<number, number>(async (items) => (items.length > 1 ? [1] : items), { maxBatch: 10, concurrency: 1 });
    await expect(Promise.all([5, 6].map((n) => batcher.submit(n)))).resolves.toEqual([5, 6]);
  });

  it('with lingerMs, waits that long for more calls before a batch starts, or until the batch is full', async () => {
    const batches: number[][] = [];
    const record = async (items: number[]) => {
      batches.push(items);
      return items;
    };
    const brief = new Batcher<number, number>(record, { maxBatch: 3, concurrency: 1, lingerMs: 20 });
    const first = brief.submit(1);
    await turn();
    expect(batches).toEqual([]);
    const second = brief.submit(2);
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
    // A full batch goes at once: were it to wait a minute, the test would time out.
    const patient = new Batcher<number, number>(record, { maxBatch: 3, concurrency: 1, lingerMs: 60_000 });
    const early = patient.submit(4);
    await turn();
    expect(batches).toEqual([[1, 2]]);
    await expect(Promise.all([early, patient.submit(5), patient.submit(6)])).resolves.toEqual([4, 5, 6]);
    expect(batches).toEqual([[1, 2], [4, 5, 6]]);
  });

  describe('lingering while it pays (lingerWhilePaying)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    const LINGER = 20;
    function lingerer() {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const batches: number[][] = [];
      const batcher = new Batcher<number, number>(async (items) => {
        batches.push(items);
        return items;
      }, { maxBatch: 100, concurrency: 1, weight: (n) => n, lingerMs: LINGER, lingerUntil: 10, lingerWhilePaying: true });
      /** Submits each call in turn and says whether their batch waited for the linger. */
      const batch = async (...items: number[]) => {
        const before = batches.length;
        const done = Promise.all(items.map((n) => batcher.submit(n)));
        await vi.advanceTimersByTimeAsync(0);
        const waited = batches.length === before;
        await vi.advanceTimersByTimeAsync(LINGER);
        await expect(done).resolves.toEqual(items);
        expect(batches.at(-1)).toEqual(items);
        return waited;
      };
      return { batcher, batches, batch };
    }

    it('a caller alone waits once (a probe), then goes at once, and probes again a while later', async () => {
      const { batch } = lingerer();
      expect(await batch(1)).toBe(true);
      for (let i = 0; i < 5; i++) expect(await batch(1)).toBe(false);
      await vi.advanceTimersByTimeAsync(LINGER_PROBE_MS);
      expect(await batch(1)).toBe(true);
      expect(await batch(1)).toBe(false);
    });

    it('waits on every batch once a wait gathered a call, until waits in a row gather none', async () => {
      const { batcher, batches, batch } = lingerer();
      // The probe: a second call comes during the wait, and both go together.
      const first = batcher.submit(1);
      await vi.advanceTimersByTimeAsync(LINGER / 2);
      expect(batches).toEqual([]);
      const second = batcher.submit(2);
      await vi.advanceTimersByTimeAsync(LINGER);
      await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
      expect(batches).toEqual([[1, 2]]);
      // It pays: the next batches wait too, even alone, until LINGER_MISSES of them gathered nothing.
      for (let i = 0; i < LINGER_MISSES; i++) expect(await batch(1)).toBe(true);
      expect(await batch(1)).toBe(false);
    });

    it('a batch that weighs lingerUntil goes at once, and never waits for more', async () => {
      const { batcher, batches, batch } = lingerer();
      expect(await batch(10)).toBe(false);
      expect(await batch(3, 4)).toBe(true);
      // Paying now: a wait ends as soon as its batch weighs lingerUntil.
      const early = batcher.submit(4);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([[10], [3, 4]]);
      const late = batcher.submit(6);
      await vi.advanceTimersByTimeAsync(0);
      await expect(Promise.all([early, late])).resolves.toEqual([4, 6]);
      expect(batches).toEqual([[10], [3, 4], [4, 6]]);
    });
  });
});
