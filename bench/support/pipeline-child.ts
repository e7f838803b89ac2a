// The processes `npm run bench:pipeline` measures, each forked by bench/support/processes.ts with
// BENCH_CHILD_MODE in its environment, talking to the parent over IPC:
//
//   process  the real service: startProcess() with the roles and settings the environment
//            names (ROLES, DATABASE_SCHEMA, QUEUE_PREFIX, SMTP_URL, …), listening on 127.0.0.1:0
//            when it runs the api role.
//   drain    the matching baseline: a no-op BullMQ worker per queue (BENCH_QUEUES, comma
//            separated, under QUEUE_PREFIX) with MATCH_CONCURRENCY, as the matcher role starts
//            its workers; says `done` after BENCH_EXPECTED completions.
//   mail     the e-mail baseline: nodemailer's pooled SMTP transport with SMTP_MAX_CONNECTIONS
//            sends BENCH_MAIL_COUNT messages rendered once by the real renderer (BENCH_MAIL_KIND
//            `digest` or `instant`, of BENCH_MAIL_EVENTS events made as the parts make theirs),
//            BENCH_MAIL_CONCURRENCY at a time, when told `go`; first,
//            before `ready`, BENCH_MAIL_WARMUP of them untimed (default none).
//
//   child → parent  { type: 'ready', port, rules, memory }    started (port null without the api role)
//   parent → child  { type: 'memory' }                        child → parent { type: 'memory', … }
//   parent → child  { type: 'go' }                            mail mode: start sending
//   child → parent  { type: 'done', completed, failed }       drain and mail modes
//   parent → child  { type: 'stop' }                          closes everything and exits 0
//
// An orphan (the parent died) stops by itself. process.exit, never a kill, ends the child, so
// --cpu-prof (BENCH_CPU_PROF) can write its profile.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { mulberry32 } from './common';
import { createMailRenderer, LOCK_DURATION_MS, parseIngestRequest, startProcess, unsubscribeToken, type RunningProcess } from './notify';
import { randomScope, wireEvent } from './seed';

export interface MemoryReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Peak resident set size so far (VmHWM), where /proc tells it. */
  peakRss: number | null;
}

export type ParentMessage = { type: 'memory' } | { type: 'go' } | { type: 'stop' };
export type ChildMessage =
  | { type: 'ready'; port: number | null; rules: number | null; memory: MemoryReport }
  | { type: 'memory'; rules: number | null; memory: MemoryReport }
  | { type: 'done'; completed: number; failed: number; firstError: string | null }
  | { type: 'failed'; error: string };

function send(message: ChildMessage): void {
  process.send?.(message);
}

function memory(): MemoryReport {
  const usage = process.memoryUsage();
  let peakRss: number | null = null;
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) peakRss = Number(kb) * 1024;
  } catch {
    // Not Linux: no peak.
  }
  return { rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external, peakRss };
}

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const positive = (name: string): number => {
  const value = Number(required(name));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

interface Mode {
  port: number | null;
  rules: number | null;
  go?: () => void;
  close(): Promise<void>;
}

async function runProcess(): Promise<Mode> {
  const running: RunningProcess = await startProcess({ env: process.env });
  const address = running.app?.server.address() as AddressInfo | null | undefined;
  const matcher = running.config.roles.includes('match');
  return {
    port: address?.port ?? null,
    get rules() {
      return matcher ? running.runtime.pipeline.match!.index.size : null;
    },
    close: () => running.stop(),
  };
}

async function runDrain(): Promise<Mode> {
  const queues = required('BENCH_QUEUES').split(',').filter(Boolean);
  const concurrency = positive('MATCH_CONCURRENCY');
  const expected = positive('BENCH_EXPECTED');
  // One connection shared by every worker, as the worker runtime does.
  const connection = new Redis(required('REDIS_URL'), { maxRetriesPerRequest: null, connectionName: 'bench-drain' });
  let completed = 0;
  let failed = 0;
  let firstError: string | null = null;
  const workers = queues.map((name) => {
    const worker = new Worker(name, async () => undefined, { connection, prefix: required('QUEUE_PREFIX'), lockDuration: LOCK_DURATION_MS, concurrency });
    worker.on('completed', () => {
      completed++;
      if (completed + failed === expected) send({ type: 'done', completed, failed, firstError });
    });
    worker.on('failed', (_job, error) => {
      failed++;
      firstError ??= error.message;
      if (completed + failed === expected) send({ type: 'done', completed, failed, firstError });
    });
    worker.on('error', (error) => {
      firstError ??= error.message;
    });
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  return {
    port: null,
    rules: null,
    async close() {
      await Promise.allSettled(workers.map((worker) => worker.close()));
      connection.disconnect();
    },
  };
}

async function runMail(): Promise<Mode> {
  const count = positive('BENCH_MAIL_COUNT');
  const concurrency = positive('BENCH_MAIL_CONCURRENCY');
  const eventCount = positive('BENCH_MAIL_EVENTS');
  // The options of @notify/mail's SMTP transport, on nodemailer directly.
  const transporter = nodemailer.createTransport({
    url: required('SMTP_URL'),
    pool: true,
    maxConnections: positive('SMTP_MAX_CONNECTIONS'),
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  // An e-mail like the ones the part sends, rendered once: the baseline is the transport alone.
  const renderer = await createMailRenderer();
  const now = Date.now();
  const kind = process.env.BENCH_MAIL_KIND === 'instant' ? 'instant' : 'digest';
  const random = mulberry32(9);
  const scope = randomScope(random);
  // Its events made as the parts make theirs (seed.ts) and read as ingest reads them, in the
  // template the part's e-mails use, with an unsubscribe link as theirs have: the same size as the
  // part's e-mails within 3% (each part's report has both sizes).
  const wires = Array.from({ length: eventCount }, (_, i) => wireEvent(random, `baseline-0-${i}`, randomUUID(), scope, 0));
  const { events } = parseIngestRequest({ events: wires });
  const rendered = renderer.render({
    organizationName: 'Baseline organization 0',
    ruleName: 'Baseline 0',
    scope,
    kind,
    frequency: kind === 'instant' ? 'instant' : 'daily',
    timeZone: 'UTC',
    recipient: { email: 'baseline0@baseline.bench.example.com', name: null },
    unsubscribeUrl: `http://127.0.0.1:3000/unsubscribe/${unsubscribeToken('baseline secret', randomUUID(), randomUUID())}`,
    events,
  });
  const from = 'Security Alerts <alerts@notify.bench>';
  // nodemailer composes each message from the rendered parts, as @notify/mail had it do until
  // issue 11's fourth round (since then it composes them itself): the text as UTF-8 bytes with its
  // encoding named, the HTML as a ready 7bit part. Kept so that ratios compare across rounds. The
  // renderer's HTML has CRLF lines already (asciiHtml); making each LF a CRLF again, as this did,
  // left a bare CR before every line break, which nodemailer's DATA stream made a line of its own.
  const html7bit = { raw: Buffer.from(`Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${rendered.html}`, 'latin1') };
  /** Sends `total` copies, `concurrency` at a time, their Message-IDs tagged `tag`. */
  const sendCopies = async (total: number, tag: string) => {
    let next = 0;
    let completed = 0;
    let failed = 0;
    let firstError: string | null = null;
    const lane = async () => {
      while (next < total) {
        const i = next++;
        try {
          await transporter.sendMail({
            from,
            to: `b${i}@baseline.bench.example.com`,
            subject: rendered.subject,
            html: html7bit,
            text: { content: Buffer.from(rendered.text, 'utf8'), contentTransferEncoding: 'quoted-printable' },
            messageId: `<baseline-${tag}${i}-${now}@notify.bench>`,
            headers: { 'Auto-Submitted': { prepared: true, value: 'auto-generated' } },
            textEncoding: 'quoted-printable',
          });
          completed++;
        } catch (error) {
          failed++;
          firstError ??= (error as Error).message;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    return { completed, failed, firstError };
  };
  // BENCH_MAIL_WARMUP copies first, before "ready", as the service may be warmed up before its measure.
  const warmup = await sendCopies(Number(process.env.BENCH_MAIL_WARMUP ?? 0), 'warmup-');
  if (warmup.failed) throw new Error(`the baseline's warm-up failed ${warmup.failed} messages: ${warmup.firstError}`);
  return {
    port: null,
    rules: null,
    go() {
      void sendCopies(count, '').then((result) => send({ type: 'done', ...result }));
    },
    async close() {
      transporter.close();
    },
  };
}

async function main(): Promise<void> {
  const modeName = process.env.BENCH_CHILD_MODE;
  const mode = modeName === 'process' ? await runProcess() : modeName === 'drain' ? await runDrain() : modeName === 'mail' ? await runMail() : undefined;
  if (!mode) throw new Error(`unknown BENCH_CHILD_MODE ${modeName}`);

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const deadline = setTimeout(() => process.exit(code || 1), 15_000);
    deadline.unref();
    await mode.close().catch((error: unknown) => console.error('bench child: close failed:', error));
    process.exit(code);
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'memory') send({ type: 'memory', rules: mode.rules, memory: memory() });
    if (message.type === 'go') mode.go?.();
    if (message.type === 'stop') void stop(0);
  });
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  process.on('disconnect', () => void stop(0));

  send({ type: 'ready', port: mode.port, rules: mode.rules, memory: memory() });
}

main().catch((error: unknown) => {
  const message: ChildMessage = { type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  if (process.send) process.send(message, () => process.exit(1));
  else process.exit(1);
});
