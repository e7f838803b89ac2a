// Helpers every benchmark shares: where things are, how sizes come from the environment,
// a seeded PRNG, percentiles, polling and bounded concurrency.
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
export const mb = (bytes: number) => round(bytes / 1024 / 1024, 1);

export function numberFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** A small deterministic PRNG, so every run seeds the same shapes. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Waits until `check` holds, asking every `everyMs`; returns the moment it first held. */
export async function until(check: () => Promise<boolean>, options: { everyMs: number; timeoutMs: number; what: string }): Promise<number> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    if (await check()) return performance.now();
    if (performance.now() > deadline) throw new Error(`${options.what}: not done within ${options.timeoutMs / 1000} s`);
    await sleep(options.everyMs);
  }
}

/** Runs `task(i)` for i in [0, count), at most `concurrency` at a time. */
export async function pooled(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}
