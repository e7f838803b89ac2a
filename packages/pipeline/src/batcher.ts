/**
 * Group commit for calls that each would cost a round trip of their own: calls made while a batch
 * is running wait for it to end, then go together, as one batch, in one statement. An idle batcher
 * adds no waiting (a call alone goes at once, in the next microtask, with whatever else was asked
 * in the same turn of the event loop); a busy one makes bigger batches, so the cost per call falls
 * as the load rises, which is when it matters. On this machine a round trip to PostgreSQL costs
 * more CPU (the socket write, the server's wake-up) than most of our statements do.
 *
 * A batch that fails is tried again one call at a time, so one bad call cannot fail the others
 * that happened to share its batch; each call gets its own outcome.
 */
export class Batcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private running = 0;
  private scheduled = false;
  /** A lingering batch's start (lingerMs). */
  private lingering: NodeJS.Timeout | undefined;

  /**
   * `run` takes a batch and returns one result per item, in order. `maxBatch` bounds a batch (the
   * sum of its items' `weight`, 1 each by default; an item heavier than that goes alone),
   * `concurrency` how many batches run at once (each holds a database connection while it runs).
   * `lingerMs` makes a batch that could start wait that long for more calls (or until it is full):
   * for calls nobody waits on in a hurry, whose statements cost mostly their round trip.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: { maxBatch: number; concurrency: number; weight?: (item: I) => number; lingerMs?: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.lingering && this.queue.length >= this.options.maxBatch) {
        clearTimeout(this.lingering);
        this.start();
      }
      this.schedule();
    });
  }

  /** Calls waiting for a batch to start. */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrency || !this.queue.length) return;
    this.scheduled = true;
    const linger = this.options.lingerMs ?? 0;
    if (linger > 0 && this.queue.length < this.options.maxBatch) this.lingering = setTimeout(() => this.start(), linger);
    else queueMicrotask(() => this.start());
  }

  private start(): void {
    this.scheduled = false;
    this.lingering = undefined;
    while (this.running < this.options.concurrency && this.queue.length) void this.next();
  }

  private async next(): Promise<void> {
    const weight = this.options.weight ?? (() => 1);
    let count = 1;
    let total = weight(this.queue[0]!.item);
    while (count < this.queue.length && total + weight(this.queue[count]!.item) <= this.options.maxBatch) total += weight(this.queue[count++]!.item);
    const batch = this.queue.splice(0, count);
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
