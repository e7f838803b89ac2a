// `npm run bench:pipeline`: the delivery pipeline against real Redis, PostgreSQL and an SMTP
// sink on this machine, each measure beside a raw baseline taken in the same run (before and
// after it; the mean is the baseline), because the machine is shared and absolute figures drift.
//
//   1. ingest      accepted events/s over HTTP, batches of 1,000 (server: api role only)
//                  vs BullMQ addBulk of the same events as one job each
//   2. matching    events/s through the matcher role with 100,000 rules loaded (2,000
//                  organizations × 50), and the matcher's RSS with them
//                  vs a no-op BullMQ worker draining one job per event (same queues, concurrency)
//   3. instant     202 of the ingest request → SMTP accept, at 200 single-event requests/s,
//                  every event the first match of its own instant rule (server: all roles),
//                  measured for 15 s after 15 s of the same (BENCH_INSTANT_WARMUP events)
//   3b. burst     20,000 events in 40 requests of 500, each the first match of its own instant rule
//                  → 20,000 e-mails, first request → last accept, with CPU per 1,000 e-mails
//                  vs nodemailer's pooled transport sending 20,000 one-event messages
//   4. digests     5,000 rule flushes of 100,000 pending matches → 5,000 e-mails accepted
//                  vs nodemailer's pooled transport sending 5,000 similar messages
//   4b. wave      20,000 daily digests (one member, 5 events each) falling due at once → 20,000
//                  e-mails accepted, with CPU seconds per 1,000 e-mails of ours, PostgreSQL, Redis
//                  vs nodemailer's pooled transport sending 20,000 similar messages
//   5. retention   a month of history (1,000,000 events and their matches) dropped by the
//                  partition, as the schedule role does it
//                  vs a DELETE of another month of the same size
//   6. preview     a rule preview over an organization's 1,000,000 events of the last 30 days
//                  (spread over the 21 scopes, and all of one scope): <= 500 ms
//
// Every part has its own schema bench_<hex> and queue prefixes bench-<hex>; they, the child
// processes (bench/support/pipeline-child.ts) and the sink are removed whether the part passes or
// fails. Figures go to stdout and to bench/results/pipeline.json, one entry a part: a run of some
// parts replaces those parts' entries and keeps the others, each entry with its date, commit,
// machine and the parts it ran beside (BENCH_RESULTS=<file> merges into that file instead).
//
// One file per part in bench/pipeline/, the helpers they share in bench/support/. Run some parts
// only with `npm run bench:pipeline -- matching` (or `-- ingest,instant`, or BENCH_PARTS).
//
// Environment (all optional): BENCH_PARTS (ingest,matching,instant,burst,digests,wave,retention,preview),
// BENCH_ROUNDS=<n> (every part n times, the parts in turn round after round; each measure is then the
// median round's, with every round's figures in pipeline.json: on this shared machine one part's
// ratio moved from 0.58x to 0.85x between runs of the same code), BENCH_CPU_PROF=<dir>
// (children run with --cpu-prof), BENCH_NODE_ARGS (more node flags for every child process, the raw
// baselines' too, e.g.
// `--max-semi-space-size=32`), BENCH_LOG_LEVEL (children's LOG_LEVEL, default warn),
// BENCH_STRICT=1 (exit 1 when a target is missed), BENCH_SOURCE=1 (the service's processes run its
// TypeScript sources through tsx rather than the build, see SERVICE_FROM_SOURCE), and the sizes at
// the top of each part.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { numberFromEnv, round } from '../support/common';
import { Resources, SERVICE_FROM_SOURCE } from '../support/processes';
import { describeMachine, log, medianMeasure, printTable, seconds, type Measure, type PartReport } from '../support/report';
import { keptEntries, mergeEntries, readResults, resultsFile, revision, writeResults, type Revision } from '../support/results';
import * as burst from './burst';
import * as digests from './digests';
import * as ingest from './ingest';
import * as instant from './instant';
import * as matching from './matching';
import * as preview from './preview';
import * as retention from './retention';
import * as wave from './wave';

const PARTS = {
  ingest: { title: '1. ingest', run: ingest.run },
  matching: { title: '2. matching', run: matching.run },
  instant: { title: '3. instant latency', run: instant.run },
  burst: { title: '3b. one-event e-mails', run: burst.run },
  digests: { title: '4. digests', run: digests.run },
  wave: { title: '4b. the 09:00 wave', run: wave.run },
  retention: { title: '5. retention', run: retention.run },
  preview: { title: '6. rule preview', run: preview.run },
} as const;
type PartName = keyof typeof PARTS;

/** One part's latest result in pipeline.json: its figures, or the error it failed with. */
type PartEntry = Revision & {
  date: string;
  /** The parts of the run it came from, in the order they ran: a part alone and in the full run differ. */
  run_parts: string[];
  rounds: number;
  service: string;
  machine: ReturnType<typeof describeMachine> & { note: string };
  /** The part's seconds, every round's together. */
  seconds: number;
} & ({ pass: boolean; measures: Record<string, Measure>; details: Record<string, unknown> } | { pass: false; error: string });

/** BENCH_ROUNDS: how many times each part runs, all parts in turn, round after round (default 1). */
const ROUNDS = Math.max(1, Math.floor(numberFromEnv('BENCH_ROUNDS', 1)));

async function main(): Promise<number> {
  const wanted = [...new Set((process.argv.slice(2).join(',') || process.env.BENCH_PARTS || Object.keys(PARTS).join(','))
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean))] as PartName[];
  for (const part of wanted) if (!(part in PARTS)) throw new Error(`unknown part ${part}; the parts are ${Object.keys(PARTS).join(',')}`);
  const loadBefore = os.loadavg();
  const startedAt = performance.now();
  const rev = revision();
  const RESULTS_FILE = resultsFile('pipeline');
  // Read now, so that a file this run cannot merge into says so before the run rather than after.
  const kept = keptEntries<PartEntry>(await readResults(RESULTS_FILE), wanted, Object.keys(PARTS));
  const all = new Set<Resources>();
  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void Promise.allSettled([...all].map((res) => res.release())).then(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  console.log(`bench:pipeline — ${wanted.join(', ')} (${os.cpus().length} CPUs, load ${loadBefore.map((value) => round(value, 2)).join(' ')}; the service ${SERVICE_FROM_SOURCE ? 'from its sources (tsx)' : 'built'})`);
  const rounds: Record<string, (PartReport | { error: string })[]> = {};
  const partSeconds: Record<string, number> = {};
  for (let roundNo = 1; roundNo <= ROUNDS; roundNo++) {
    for (const name of wanted) {
      const part = PARTS[name];
      console.log(`\n${part.title}${ROUNDS > 1 ? ` (round ${roundNo} of ${ROUNDS})` : ''}`);
      const res = new Resources();
      all.add(res);
      const partStart = performance.now();
      try {
        const report = await part.run(res);
        (rounds[name] ??= []).push({ ...report, details: { ...report.details, part_seconds: round((performance.now() - partStart) / 1000, 1) } });
      } catch (error) {
        console.error(`  ${name} failed:`, error);
        (rounds[name] ??= []).push({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      } finally {
        await res.release();
        all.delete(res);
      }
      partSeconds[name] = (partSeconds[name] ?? 0) + (performance.now() - partStart) / 1000;
      log(`(${seconds(performance.now() - partStart)}, cleaned up)`);
    }
  }
  // One report a part: of several rounds, each measure is their median (medianMeasure) and the
  // details are every round's; a part that failed in any round failed.
  const reports: Record<string, PartReport | { error: string }> = {};
  for (const name of wanted) {
    const runs = rounds[name] ?? [];
    const failedRun = runs.find((run): run is { error: string } => 'error' in run);
    if (failedRun) {
      reports[name] = failedRun;
      continue;
    }
    const done = runs as PartReport[];
    reports[name] = done.length === 1
      ? done[0]!
      : {
          measures: Object.fromEntries(Object.keys(done[0]!.measures).map((key) => [key, medianMeasure(done.map((run) => run.measures[key]!))])),
          details: { rounds: done.map((run) => run.details) },
        };
  }
  const measures: Measure[] = Object.values(reports).flatMap((report) => ('measures' in report ? Object.values(report.measures) : []));

  const failed = Object.values(reports).some((report) => 'error' in report);
  const allPass = !failed && measures.every((m) => m.pass || m.target === '(reported)');
  const run = {
    ...rev,
    date: new Date().toISOString(),
    run_parts: wanted,
    rounds: ROUNDS,
    service: SERVICE_FROM_SOURCE ? 'TypeScript sources through tsx (BENCH_SOURCE=1)' : 'built JavaScript (dist/), as deployments run it',
    machine: {
      ...describeMachine(loadBefore),
      note: 'shared machine: compare ratios, which pair each measure with a baseline taken before and after it in the same run',
    },
  };
  const fresh: Record<string, PartEntry> = {};
  for (const [name, report] of Object.entries(reports) as [PartName, PartReport | { error: string }][]) {
    const common = { ...run, seconds: round(partSeconds[name] ?? 0, 1) };
    fresh[name] = 'error' in report
      ? { ...common, pass: false, error: report.error }
      : { ...common, pass: Object.values(report.measures).every((m) => m.pass || m.target === '(reported)'), measures: report.measures, details: report.details };
  }
  await writeResults(RESULTS_FILE, mergeEntries(kept, fresh, Object.keys(PARTS)));

  printTable(measures);
  const others = Object.keys(kept);
  console.log(`\n${failed ? 'a part failed' : allPass ? 'all targets met' : 'some targets missed'}; ${seconds(performance.now() - startedAt)} in all; ${wanted.join(', ')} written to ${RESULTS_FILE}${others.length ? ` (kept from earlier runs: ${others.join(', ')})` : ''}`);
  if (failed) return 1;
  return allPass || process.env.BENCH_STRICT !== '1' ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error('bench:pipeline failed:', error);
      process.exit(1);
    },
  );
}
