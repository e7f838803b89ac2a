export interface BatcherOptions<I> {
  /** The most a batch weighs (the sum of its items' `weight`); an item heavier than that goes alone. */
  maxBatch: number;
  /** How many batches run at once (each holds a database connection while it runs). */
  concurrency: number;
  /** An item's weight; 1 by default. */
  weight?: (item: I) => number;
  /**
   * A batch that could start waits this long for more calls, or until it weighs `lingerUntil`:
   * for calls whose statements cost mostly their round trip.
   */
  lingerMs?: number;
  /** The weight at which a batch stops waiting, and below which it waits at all (default maxBatch). */
  lingerUntil?: number;
  /**
   * Linger only while lingering gathers calls (for calls someone waits on, such as an ingest
   * request): it starts once a wait gathered a call, and stops after LINGER_MISSES waits in a row
   * that gathered none (one caller at a time, or a trickle), when batches go at once again and one
   * wait each LINGER_PROBE_MS looks whether calls come together again. A caller alone then waits
   * `lingerMs` about once a second rather than on every call.
   */
  lingerWhilePaying?: boolean;
}

/** Waits in a row that gathered no call, after which a lingerWhilePaying batcher stops waiting. */
export const LINGER_MISSES = 3;
/** How often a lingerWhilePaying batcher that stopped waiting tries one wait. */
export const LINGER_PROBE_MS = 1000;

/**
 * Group commit for calls that each would cost a round trip of their own: calls made while a batch
 * is running wait for it to end, then go together, as one batch, in one statement. An idle batcher
 * adds no waiting (a call alone goes at once, in the next microtask, with whatever else was asked
 * in the same turn of the event loop); a busy one makes bigger batches, so the cost per call falls
 * as the load rises, which is when it matters. On this machine a round trip to PostgreSQL costs
 * more CPU (the socket write, the server's wake-up) than most of our statements do. A batcher that
 * lingers (`lingerMs`) makes a batch wait a little for more calls even when nothing runs.
 *
 * A batch that fails is tried again one call at a time, so one bad call cannot fail the others
 * that happened to share its batch; each call gets its own outcome.
 */
export class Batcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  /** The sum of the queued items' weights. */
  private queued = 0;
  private running = 0;
  private scheduled = false;
  /** A lingering batch's start (lingerMs), and how many calls were queued when it began to wait. */
  private lingering: { timer: NodeJS.Timeout; calls: number } | undefined;
  /**
   * lingerWhilePaying: waits in a row that gathered no call (every batch waits while there were
   * fewer than LINGER_MISSES; none at first), and when the last probe was.
   */
  private misses = LINGER_MISSES;
  private probedAt = -Infinity;

  /** `run` takes a batch and returns one result per item, in order. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.queued += this.weightOf(item);
      if (this.lingering && this.queued >= this.lingerUntil) {
        clearTimeout(this.lingering.timer);
        this.start();
      }
      this.schedule();
    });
  }

  /** Calls waiting for a batch to start. */
  get waiting(): number {
    return this.queue.length;
  }

  private weightOf(item: I): number {
    return this.options.weight ? this.options.weight(item) : 1;
  }

  private get lingerUntil(): number {
    return this.options.lingerUntil ?? this.options.maxBatch;
  }

  /** Whether a batch that could start now waits for more calls; a wait to probe (lingerWhilePaying) is recorded as such. */
  private shouldLinger(): boolean {
    if (!this.options.lingerMs || this.queued >= this.lingerUntil) return false;
    if (!this.options.lingerWhilePaying || this.misses < LINGER_MISSES) return true;
    const now = performance.now();
    if (now - this.probedAt < LINGER_PROBE_MS) return false;
    this.probedAt = now;
    return true;
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrency || !this.queue.length) return;
    this.scheduled = true;
    if (this.shouldLinger()) this.lingering = { timer: setTimeout(() => this.start(), this.options.lingerMs), calls: this.queue.length };
    else queueMicrotask(() => this.start());
  }

  private start(): void {
    this.scheduled = false;
    if (this.lingering) {
      // Did the wait pay? (A batch that filled up during it did.)
      if (this.queue.length > this.lingering.calls) this.misses = 0;
      else if (this.misses < LINGER_MISSES) this.misses++;
      this.lingering = undefined;
    }
    while (this.running < this.options.concurrency && this.queue.length) void this.next();
  }

  private async next(): Promise<void> {
    let count = 1;
    let total = this.weightOf(this.queue[0]!.item);
    while (count < this.queue.length && total + this.weightOf(this.queue[count]!.item) <= this.options.maxBatch) total += this.weightOf(this.queue[count++]!.item);
    const batch = this.queue.splice(0, count);
    this.queued -= total;
    this.running++;
    try {
      await this.settle(batch);
    } finally {
      this.running--;
      this.schedule();
    }
  }

  private async settle(batch: typeof this.queue): Promise<void> {
    try {
      const results = await this.run(batch.map((call) => call.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} gave ${results.length} results`);
      batch.forEach((call, i) => call.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // One at a time: each call's own outcome.
      await Promise.all(batch.map((call) => this.settle([call])));
    }
  }
}
