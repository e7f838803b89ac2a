/**
 * At most `size` tasks at once, the others waiting in order: bounds what a process has in flight
 * (e-mails being sent) whichever job they come from.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await task();
    } finally {
      // The slot passes to the next waiter as it is, or frees.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
