import { describe, expect, it } from 'vitest';
import { keptEntries, mergeEntries } from './results';

// How a run of some parts of `npm run bench:pipeline` updates bench/results/pipeline.json.
describe('the pipeline results file', () => {
  const known = ['ingest', 'matching', 'digests', 'wave'];
  const entry = (date: string, pass = true) => ({ date, pass });
  const previous = { pass: false, parts: { ingest: entry('full'), matching: entry('full', false), digests: entry('full'), wave: entry('full') } };

  it('replaces the parts a run ran and keeps the others, in the order of the parts', () => {
    const kept = keptEntries<{ date: string; pass: boolean }>(previous, ['wave', 'matching'], known);
    expect(Object.keys(kept)).toEqual(['ingest', 'digests']);
    const merged = mergeEntries(kept, { wave: entry('subset'), matching: entry('subset') }, known);
    expect(Object.keys(merged.parts)).toEqual(known);
    expect(Object.values(merged.parts).map((part) => part.date)).toEqual(['full', 'subset', 'full', 'subset']);
    expect(merged.pass).toBe(true);
  });

  it('drops parts that no longer exist, and fails when a kept part failed', () => {
    const kept = keptEntries<{ date: string; pass: boolean }>({ parts: { ...previous.parts, gone: entry('old') } }, ['wave'], known);
    expect(Object.keys(kept)).toEqual(['ingest', 'matching', 'digests']);
    expect(mergeEntries(kept, { wave: entry('subset') }, known).pass).toBe(false);
  });

  it('starts afresh from no file or a file of another shape', () => {
    expect(keptEntries(undefined, ['wave'], known)).toEqual({});
    expect(keptEntries({ measures: {}, parts: ['ingest'] }, ['wave'], known)).toEqual({});
    expect(keptEntries(null, ['wave'], known)).toEqual({});
  });
});
