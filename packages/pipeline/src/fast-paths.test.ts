import { describe, expect, it } from 'vitest';
import { FAST_PATH_NAMES as CONFIGURED, loadConfig } from '@notify/config';
import { ALL_FAST_PATHS, NO_FAST_PATHS } from './fast-paths';

describe('fast paths', () => {
  it('are the options FAST_PATHS names, one name each', () => {
    expect(Object.keys(ALL_FAST_PATHS).sort()).toEqual([...CONFIGURED].sort());
    expect(Object.keys(NO_FAST_PATHS).sort()).toEqual([...CONFIGURED].sort());
  });

  it('are all on by default, none with FAST_PATHS=none, and those named otherwise; an unknown name is refused', () => {
    const env = { DATABASE_URL: 'postgresql://localhost/x', REDIS_URL: 'redis://localhost' };
    expect(loadConfig(env).pipeline.fastPaths).toEqual(ALL_FAST_PATHS);
    expect(loadConfig({ ...env, FAST_PATHS: 'none' }).pipeline.fastPaths).toEqual(NO_FAST_PATHS);
    expect(loadConfig({ ...env, FAST_PATHS: 'matchInStore, sendInProcess' }).pipeline.fastPaths).toEqual({ ...NO_FAST_PATHS, matchInStore: true, sendInProcess: true });
    expect(() => loadConfig({ ...env, FAST_PATHS: 'matchHere' })).toThrow(/unknown fast path "matchHere"/);
  });
});
