/**
 * How long mail waits while the SMTP server is unavailable (refused, unreachable, 421): the
 * first failure of an outage pauses for `initialMs`, each failure after a pause has run out
 * doubles it up to `maxMs`, failures during a pause share it, and a successful send ends the
 * outage. So an hour-long outage costs no message a retry, probes the server at most every
 * `maxMs`, and mail flows again within `maxMs` of the server coming back.
 */
export class OutagePause {
  private pauseMs = 0;
  private until = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The pause to apply now, and whether it is a new one (worth a log line). */
  next(): { ms: number; started: boolean } {
    const now = this.clock();
    if (now < this.until) return { ms: this.until - now, started: false };
    this.pauseMs = this.pauseMs === 0 ? Math.min(this.initialMs, this.maxMs) : Math.min(this.pauseMs * 2, this.maxMs);
    this.until = now + this.pauseMs;
    return { ms: this.pauseMs, started: true };
  }

  /** Whether an outage is under way (no send succeeded since it began). */
  get active(): boolean {
    return this.pauseMs > 0;
  }

  /** A send succeeded: the server is back. */
  reset(): void {
    this.pauseMs = 0;
    this.until = 0;
  }
}
