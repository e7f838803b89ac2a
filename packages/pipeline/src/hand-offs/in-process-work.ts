/**
 * What the in-process side of every hand-off shares: work taken without a job runs in the
 * background, each piece released when it settles, and `close` takes no more and waits for it.
 */
export abstract class InProcessWork {
  protected closed = false;
  private readonly running = new Set<Promise<void>>();
  /** Whether a piece of work failed since the last call of `settled`. */
  private failedSinceSettled = false;

  /** Runs `work` in the background: `settled` hears how it ended, then `release` frees its place. */
  protected start<T>(work: Promise<T>, settled: { done(result: T): void; failed(error: unknown): void }, release: () => void): void {
    const running: Promise<void> = work
      .then(
        (result) => settled.done(result),
        (error: unknown) => {
          this.failedSinceSettled = true;
          settled.failed(error);
        },
      )
      .finally(() => {
        release();
        this.running.delete(running);
      });
    this.running.add(running);
  }

  /**
   * Waits for the work taken so far to settle: true when none of it failed since the last call and
   * more may be taken (not closing).
   */
  async settled(): Promise<boolean> {
    await Promise.all(this.running);
    const failed = this.failedSinceSettled;
    this.failedSinceSettled = false;
    return !failed && !this.closed;
  }

  /** Takes no more work and waits for what it took to settle. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.running);
  }
}
