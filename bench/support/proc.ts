// CPU time of processes on this machine, from /proc (Linux): what a measure cost, beside how
// long it took, because on a shared machine wall time alone says little.
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

const CLOCK_TICKS_PER_SECOND = 100;

/** The user + system CPU seconds a /proc/<pid>/stat line counts. */
function statSeconds(stat: string): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** User + system CPU seconds process `pid` has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  return statSeconds(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * User + system CPU seconds of each live process named `command` (PostgreSQL's backends:
 * `postgres`), by pid. Read synchronously: 1–2 ms for a machine's processes, where awaiting each
 * file cost 17 ms of the bench's CPU.
 */
function cpuSecondsByPid(command: string): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== command) continue;
    seconds.set(Number(entry), statSeconds(stat));
  }
  return seconds;
}

/**
 * How often a CommandCpu looks at its processes: a process that exits takes at most this much of
 * its CPU time with it (a pool's connection closes after 10 s idle, so usually none).
 */
const SAMPLE_MS = 1000;

/**
 * The CPU seconds every process named `command` spends from now on, those that start later
 * included. Each is followed by pid, sampled every SAMPLE_MS (about 0.2% of a core): a process that exits keeps what it
 * was last seen to have spent (one that lived before the start counts from its start reading), where
 * a sum over the live processes at two readings lost an exited backend's seconds, and subtracted
 * those it had spent before the start (a pool's idle connections closing mid-measure: PostgreSQL's
 * share read 0.2 s per 1,000 e-mails instead of 1.3 in some runs of the digests part).
 */
export class CommandCpu {
  private readonly last: Map<number, number>;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly command: string,
    private readonly start: Map<number, number>,
  ) {
    this.last = new Map(start);
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  static begin(command: string): CommandCpu {
    return new CommandCpu(command, cpuSecondsByPid(command));
  }

  private sample(): void {
    for (const [pid, seconds] of cpuSecondsByPid(this.command)) this.last.set(pid, seconds);
  }

  /** Seconds spent since begin, as of now; the counting stops. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    let total = 0;
    for (const [pid, seconds] of this.last) total += seconds - (this.start.get(pid) ?? 0);
    return total;
  }
}

export interface CpuSplit {
  /** Our process (the server child). */
  node: number;
  postgres: number;
  redis: number;
  /** This process: the SMTP sink that accepts the e-mails, and the load the part sends (requests, flushes). */
  bench: number;
}

/** How the e-mail parts log a CpuSplit per 1,000 e-mails. */
export function cpuPerThousandEmails(cpu: CpuSplit): string {
  return `CPU s per 1,000 e-mails: ours ${cpu.node}, PostgreSQL ${cpu.postgres}, Redis ${cpu.redis}, the bench (sink) ${cpu.bench}`;
}

/**
 * Starts counting the CPU seconds of process `pid`, PostgreSQL's processes, Redis (CommandCpu) and this one;
 * the function it returns gives those used since, per `units` units of work times `per` (e.g. per
 * 1,000 e-mails), and stops the counting.
 */
export async function cpuMeter(pid: number): Promise<(units: number, per: number) => Promise<CpuSplit>> {
  const nodeBefore = await cpuSeconds(pid);
  const benchBefore = process.cpuUsage();
  const [postgres, redis] = [CommandCpu.begin('postgres'), CommandCpu.begin('redis-server')];
  return async (units, per) => {
    const node = (await cpuSeconds(pid)) - nodeBefore;
    const bench = process.cpuUsage(benchBefore);
    const [pg, rd] = [postgres.stop(), redis.stop()];
    const share = (seconds: number) => Math.round((seconds / Math.max(1, units)) * per * 100) / 100;
    return { node: share(node), postgres: share(pg), redis: share(rd), bench: share((bench.user + bench.system) / 1e6) };
  };
}
