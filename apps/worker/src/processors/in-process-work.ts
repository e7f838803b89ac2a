/**
 * What InProcessMatching and InProcessDelivery share: work taken without a job runs in the
 * background, each piece released when it settles, and `close` takes no more and waits for it.
 */
export abstract class InProcessWork {
  protected closed = false;
  private readonly running = new Set<Promise<void>>();

  /** Runs `work` in the background: `settled` hears how it ended, then `release` frees its place. */
  protected start<T>(work: Promise<T>, settled: { done(result: T): void; failed(error: unknown): void }, release: () => void): void {
    const running: Promise<void> = work
      .then((result) => settled.done(result), (error: unknown) => settled.failed(error))
      .finally(() => {
        release();
        this.running.delete(running);
      });
    this.running.add(running);
  }

  /** Takes no more work and waits for what it took to settle. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.running);
  }
}
