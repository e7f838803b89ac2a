/**
 * At most `size` tasks at once, the others waiting in order: bounds what a process has in flight
 * (e-mails being sent) whichever job they come from.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /**
   * Runs `task` in a slot. The task may give its slot up before it ends by calling `release` (an
   * e-mail the server has, while its record is written), so the next waiter starts; otherwise the
   * slot frees when the task ends, whatever it does.
   */
  async run<T>(task: (release: () => void) => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      // The slot passes to the next waiter as it is, or frees.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    };
    try {
      return await task(release);
    } finally {
      release();
    }
  }
}
