import { describe, expect, it } from 'vitest';
import { OutagePause } from './outage-pause';

describe('OutagePause', () => {
  it('starts small, doubles after each pause runs out, stops at the maximum and shares a pause under way', () => {
    let now = 0;
    const pause = new OutagePause(1000, 5000, () => now);
    expect(pause.active).toBe(false);
    expect(pause.next()).toEqual({ ms: 1000, started: true });
    now = 400;
    expect(pause.next()).toEqual({ ms: 600, started: false });
    now = 1000;
    expect(pause.next()).toEqual({ ms: 2000, started: true });
    now = 3000;
    expect(pause.next()).toEqual({ ms: 4000, started: true });
    now = 7000;
    expect(pause.next()).toEqual({ ms: 5000, started: true });
    now = 12_000;
    expect(pause.next()).toEqual({ ms: 5000, started: true });
    expect(pause.active).toBe(true);
  });

  it('begins again from the start after a successful send', () => {
    let now = 0;
    const pause = new OutagePause(1000, 60_000, () => now);
    pause.next();
    now = 1000;
    pause.next();
    pause.reset();
    expect(pause.active).toBe(false);
    expect(pause.next()).toEqual({ ms: 1000, started: true });
  });

  it('never pauses longer than the maximum, even when it is below the initial pause', () => {
    expect(new OutagePause(1000, 200, () => 0).next().ms).toBe(200);
  });
});
