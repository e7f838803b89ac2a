// Where every benchmark writes its result: one file a benchmark, bench/results/<name>.json, its
// latest run only, overwritten each time (the pipeline bench merges a run of some of its parts
// into its file, bench/pipeline/run.ts). Earlier results live in git history
// (`git log -p -- bench/results/<name>.json`). BENCH_RESULTS=<file> writes elsewhere instead, for
// runs that must not replace the kept result (the before/after runs of bench/README.md).
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { root } from './common';

/** bench/results/<name>.json, or BENCH_RESULTS when set. */
export function resultsFile(name: string): string {
  return process.env.BENCH_RESULTS || join(root, 'bench', 'results', `${name}.json`);
}

export interface Revision {
  /** HEAD when the run started, or null outside a git checkout. */
  commit: string | null;
  /** Tracked files differed from HEAD (bench/results aside): the code measured is not exactly `commit`. */
  dirty: boolean | null;
}

/** The code a result was measured on. */
export function revision(): Revision {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const commit = git('rev-parse', '--short=12', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results').length > 0;
    return { commit, dirty };
  } catch {
    return { commit: null, dirty: null };
  }
}

/** The result file's JSON, or undefined when there is none (or it is not JSON). */
export async function readResults(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Replaces `file` with `value` as JSON (non-finite numbers as null), through a temporary file. */
export async function writeResults(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const json = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'number' && !Number.isFinite(item) ? null : item), 2);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${json}\n`);
  await rename(tmp, file);
}

/**
 * Of a results file with one entry a part (`{ parts: { <name>: entry } }`, bench/pipeline/run.ts),
 * the entries a run of the parts `ran` keeps: those of the other parts still in `known`. A file of
 * another shape keeps nothing, and says so.
 */
export function keptEntries<E>(previous: unknown, ran: readonly string[], known: readonly string[]): Record<string, E> {
  if (previous === undefined) return {};
  const parts = (previous as { parts?: unknown } | null)?.parts;
  if (!parts || typeof parts !== 'object' || Array.isArray(parts)) {
    console.warn('  the results file has no entry a part: only this run\'s parts will be in it');
    return {};
  }
  const kept: Record<string, E> = {};
  for (const [name, entry] of Object.entries(parts as Record<string, unknown>)) {
    if (known.includes(name) && !ran.includes(name) && entry && typeof entry === 'object') kept[name] = entry as E;
  }
  return kept;
}

/** This run's entries over the kept ones, in the order of `known`; `pass` when every entry passed. */
export function mergeEntries<E extends { pass: boolean }>(kept: Record<string, E>, fresh: Record<string, E>, known: readonly string[]): { pass: boolean; parts: Record<string, E> } {
  const parts: Record<string, E> = {};
  for (const name of known) {
    const entry = fresh[name] ?? kept[name];
    if (entry) parts[name] = entry;
  }
  return { pass: Object.values(parts).every((entry) => entry.pass), parts };
}
