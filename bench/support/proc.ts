// CPU time of processes on this machine, from /proc (Linux): what a measure cost, beside how
// long it took, because on a shared machine wall time alone says little.
import { readdir, readFile } from 'node:fs/promises';

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU seconds process `pid` has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * User + system CPU seconds used so far by every live process named `command` (PostgreSQL's
 * backends: `postgres`); a backend that exits between two readings takes its seconds with it.
 */
export async function cpuSecondsOf(command: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== command) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  }
  return total;
}

export interface CpuSplit {
  /** Our process (the server child). */
  node: number;
  postgres: number;
  redis: number;
}

/**
 * Starts counting the CPU seconds of process `pid`, PostgreSQL's backends and Redis; the function
 * it returns gives those used since, per `units` units of work times `per` (e.g. per 1,000 e-mails).
 */
export async function cpuMeter(pid: number): Promise<(units: number, per: number) => Promise<CpuSplit>> {
  const read = async (): Promise<CpuSplit> => ({ node: await cpuSeconds(pid), postgres: await cpuSecondsOf('postgres'), redis: await cpuSecondsOf('redis-server') });
  const before = await read();
  return async (units, per) => {
    const after = await read();
    const share = (seconds: number) => Math.round((seconds / Math.max(1, units)) * per * 100) / 100;
    return { node: share(after.node - before.node), postgres: share(after.postgres - before.postgres), redis: share(after.redis - before.redis) };
  };
}
