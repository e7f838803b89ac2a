// The figures of `npm run bench:pipeline`: one Measure per figure, beside its baseline or its
// absolute target, and the table printed at the end.
import os from 'node:os';
import { round } from './common';

export interface Measure {
  label: string;
  unit: string;
  value: number;
  /** Mean of the raw baseline runs, null where the target is absolute. */
  baseline: number | null;
  baseline_runs: number[];
  ratio: number | null;
  target: string;
  /** The part's own checks held (every e-mail accepted once, every event stored, …): a measure whose checks failed fails, whatever its figure. */
  checks_held: boolean;
  pass: boolean;
  /** With BENCH_ROUNDS > 1: each round's figures, in the order they ran (the measure is their median). */
  rounds?: Pick<Measure, 'value' | 'baseline' | 'ratio' | 'checks_held' | 'pass'>[];
}

export interface PartReport {
  measures: Record<string, Measure>;
  details: Record<string, unknown>;
}

export function ratioMeasure(label: string, unit: string, value: number, runs: number[], minRatio: number, ok = true): Measure {
  const baseline = runs.reduce((a, b) => a + b, 0) / runs.length;
  const ratio = round(value / baseline, 3);
  return {
    label,
    unit,
    value: round(value, 1),
    baseline: round(baseline, 1),
    baseline_runs: runs.map((run) => round(run, 1)),
    ratio,
    target: `>= ${minRatio}x baseline`,
    checks_held: ok,
    pass: ok && ratio >= minRatio,
  };
}

/**
 * A figure held under a limit, to two decimals. A measure is judged as it is reported, the figure
 * the rounds of BENCH_ROUNDS are ranked by (medianMeasure): two rounds that read the same are
 * never one passing and one failing. To one decimal, and judged unrounded, three rounds of 1.96,
 * 2.01 and 1.79 ms (the instant CPU an event, against 2) ranked 2.01 as the median, tied with 1.96
 * at "2.0", and failed.
 */
export function limitMeasure(label: string, unit: string, value: number, max: number, ok = true): Measure {
  const shown = round(value, 2);
  return { label, unit, value: shown, baseline: null, baseline_runs: [], ratio: null, target: `<= ${max} ${unit}`, checks_held: ok, pass: ok && shown <= max };
}

/**
 * One measure of several rounds of the same part (BENCH_ROUNDS): the round whose figure is the median
 * (its ratio where it has a baseline, else its value), every round's figures beside it. Of an even
 * number of rounds, the worse of the two middle ones. A measure whose target is a limit, or which
 * is only reported, is ranked by its value; the others by their ratio. The median does not hide a
 * failed check: a measure whose checks failed in any round fails.
 */
export function medianMeasure(rounds: Measure[]): Measure {
  const first = rounds[0];
  if (!first) throw new Error('medianMeasure: no rounds');
  if (rounds.length === 1) return first;
  const score = (m: Measure) => (m.ratio !== null ? m.ratio : m.target.startsWith('<=') ? -m.value : m.value);
  // Worst first: the lower ratio, the larger value under a limit.
  const ranked = [...rounds].sort((a, b) => score(a) - score(b));
  const median = ranked[Math.floor((ranked.length - 1) / 2)]!;
  const checksHeld = rounds.every((m) => m.checks_held);
  return {
    ...median,
    checks_held: checksHeld,
    pass: median.pass && checksHeld,
    rounds: rounds.map(({ value, baseline, ratio, checks_held, pass }) => ({ value, baseline, ratio, checks_held, pass })),
  };
}

export const log = (message: string) => console.log(`  ${message}`);
export const seconds = (ms: number) => `${round(ms / 1000, 2)} s`;

export function printTable(measures: Measure[]): void {
  const header = ['measure', 'value', 'unit', 'baseline', 'ratio', 'target', 'result'];
  const lines = measures.map((m) => [
    m.rounds ? `${m.label} (median of ${m.rounds.length}: ${m.rounds.map((r) => (r.ratio ?? r.value).toString()).join(' / ')})` : m.label,
    String(m.value),
    m.unit,
    m.baseline === null ? '' : String(m.baseline),
    m.ratio === null ? '' : m.ratio.toFixed(2),
    m.target,
    m.target === '(reported)' ? '' : m.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...lines.map((line) => line[i]!.length)));
  const numeric = new Set([1, 3, 4]);
  const format = (cells: string[]) => cells.map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ');
  console.log(`\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const line of lines) console.log(format(line));
}

/** What a result file says of the machine it was measured on: shared and noisy, so its load too. */
export function describeMachine(loadBefore: number[]) {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model ?? null,
    memory_gb: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    load_average_before: loadBefore.map((value) => round(value, 2)),
    load_average_after: os.loadavg().map((value) => round(value, 2)),
  };
}
