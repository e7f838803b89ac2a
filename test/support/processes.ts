import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  /** Where its HTTP server listens, when it runs the api role. */
  baseUrl: string | undefined;
  /** Its JSON log lines, parsed, as they arrive. */
  lines: Array<Record<string, unknown>>;
  /** What it wrote to stderr (a crash's stack trace). */
  stderr(): string;
  /** Resolves with the exit code (null after a signal) once the process has ended. */
  exited: Promise<number | null>;
  /** SIGKILL, and wait for the end. */
  kill(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/** How the server runs: its TypeScript sources through tsx (`npm start`), or the build (`NODE_ENV=production npm start`). */
const ENTRIES = {
  source: ['--import', 'tsx', '--conditions=@notify/source', 'apps/server/src/main.ts'],
  build: ['--enable-source-maps', 'apps/server/dist/main.js'],
} as const;

/**
 * `npm start` as production runs it: the real entry point in a process of its own, logging JSON to
 * stdout. Resolves once it logs `started` (all its roles are up). `entry: 'build'` needs `npm run build` first.
 */
export async function spawnServer(env: Record<string, string>, options: { startTimeoutMs?: number; entry?: keyof typeof ENTRIES } = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...ENTRIES[options.entry ?? 'source']], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    for (const part of parts) {
      if (!part.trim()) continue;
      try {
        lines.push(JSON.parse(part) as Record<string, unknown>);
      } catch {
        lines.push({ msg: part });
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const handle: ServerProcess = {
    child,
    baseUrl: undefined,
    lines,
    exited,
    stderr: () => stderr,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  const outcome = await vi
    .waitFor(
      () => {
        const listening = lines.find((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening at '));
        if (listening) handle.baseUrl = (listening.msg as string).slice('Server listening at '.length);
        if (lines.some((line) => line.msg === 'started')) return 'started';
        if (child.exitCode !== null) return 'exited';
        throw new Error('not started yet');
      },
      { timeout: options.startTimeoutMs ?? 30_000, interval: 50 },
    )
    .catch(() => 'late');
  if (outcome === 'started') return handle;
  child.kill('SIGKILL');
  throw new Error(`the server did not start: ${stderr}\n${lines.map((line) => JSON.stringify(line)).join('\n')}`);
}
