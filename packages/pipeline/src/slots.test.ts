import { describe, expect, it } from 'vitest';
import { Slots } from './slots';

describe('Slots', () => {
  it('runs at most `size` tasks at once, the others in the order they came, and frees a slot whatever a task does', async () => {
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(n);
      running--;
      if (n === 3) throw new Error('three');
      return n;
    };
    const results = await Promise.allSettled([1, 2, 3, 4, 5, 6].map((n) => slots.run(task(n))));
    expect(most).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([1, 2, 'three', 4, 5, 6]);
    await expect(slots.run(async () => 'free again')).resolves.toBe('free again');
  });

  it('starts the next waiter when a task gives its slot up early, and frees it once only', async () => {
    const slots = new Slots(1);
    const events: string[] = [];
    let finishFirst!: () => void;
    const first = slots.run(async (release) => {
      events.push('first sent');
      release();
      release();
      await new Promise<void>((resolve) => (finishFirst = resolve));
      events.push('first recorded');
    });
    const second = slots.run(async () => {
      events.push('second sent');
    });
    await second;
    expect(events).toEqual(['first sent', 'second sent']);
    finishFirst();
    await first;
    // One slot, free once: a third and a fourth task still run one at a time.
    let running = 0;
    let most = 0;
    const task = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
    };
    await Promise.all([slots.run(task), slots.run(task)]);
    expect(most).toBe(1);
  });
});
