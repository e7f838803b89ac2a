import { describe, expect, it } from 'vitest';
import { limitMeasure, medianMeasure, ratioMeasure } from './report';

// How `BENCH_ROUNDS` judges a measure of several rounds (bench/pipeline/run.ts).
describe('medianMeasure', () => {
  const ratio = (value: number, ok = true) => ratioMeasure('digests', 'e-mails/s', value, [100], 0.8, ok);
  const limit = (value: number, ok = true) => limitMeasure('CPU an event', 'ms', value, 2, ok);

  it('gives the median round of an odd number, with every round in the order it ran', () => {
    const measure = medianMeasure([ratio(70), ratio(90), ratio(82)]);
    expect(measure.ratio).toBe(0.82);
    expect(measure.value).toBe(82);
    expect(measure.pass).toBe(true);
    expect(measure.rounds?.map((round) => round.ratio)).toEqual([0.7, 0.9, 0.82]);
  });

  it('gives the worse of the two middle rounds of an even number', () => {
    expect(medianMeasure([ratio(90), ratio(70), ratio(85), ratio(60)]).ratio).toBe(0.7);
    // Under a limit, the worse is the larger.
    expect(medianMeasure([limit(1.8), limit(2.4), limit(2.1), limit(1.5)]).value).toBe(2.1);
  });

  it('ranks a measure under a limit by its value, the larger the worse', () => {
    const measure = medianMeasure([limit(2.9), limit(1.9), limit(2.4)]);
    expect(measure.value).toBe(2.4);
    expect(measure.pass).toBe(false);
  });

  it('ranks figures under a limit as finely as it judges them', () => {
    // Each round's CPU an event, ours + PostgreSQL + Redis: the median is 1.96, under the limit.
    const measure = medianMeasure([limit(1.31 + 0.64 + 0.01), limit(1.37 + 0.63 + 0.01), limit(1.18 + 0.6 + 0.01)]);
    expect(measure.value).toBe(1.96);
    expect(measure.pass).toBe(true);
  });

  it('judges each figure as it reports it, so rounds that read the same get the same verdict', () => {
    for (const value of [1.996, 2.004]) expect(limit(value)).toMatchObject({ value: 2, pass: true });
    expect(limit(2.006)).toMatchObject({ value: 2.01, pass: false });
    for (const value of [79.96, 80.04]) expect(ratio(value)).toMatchObject({ ratio: 0.8, pass: true });
    expect(ratio(79.94)).toMatchObject({ ratio: 0.799, pass: false });
  });

  it('fails a measure whose checks failed in any round, whatever its median', () => {
    const measure = medianMeasure([ratio(95), ratio(90, false), ratio(92)]);
    expect(measure.ratio).toBe(0.92);
    expect(measure.checks_held).toBe(false);
    expect(measure.pass).toBe(false);
    expect(medianMeasure([limit(1.5), limit(1.6), limit(1.7, false)]).pass).toBe(false);
  });

  it('gives one round as it is', () => {
    const only = ratio(85);
    expect(medianMeasure([only])).toBe(only);
  });
});
