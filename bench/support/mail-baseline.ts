// The raw baseline of the e-mail parts (one-event e-mails, digests, wave): nodemailer's pooled
// transport in a child process (bench/support/pipeline-child.ts, mode `mail`) sending `count`
// copies of one e-mail like the part's (an instant alert or a digest of `events` events made as the
// part makes its own), rendered once, to the sink: the transport alone, from "go" to the last
// accept. Each side's bytes an e-mail, as the sink counts them, go in the part's report.

import { performance } from 'node:perf_hooks';
import { round } from './common';
import { stopChild } from './pipeline';
import { cpuMeter } from './proc';
import type { Resources, Sink } from './processes';
import { log, seconds } from './report';

/** The defaults of SMTP_MAX_CONNECTIONS and MAIL_CONCURRENCY, which the baseline uses too. */
export const SMTP_MAX_CONNECTIONS = 5;
export const MAIL_CONCURRENCY = 20;
/** The service's compose threads: its default (1), or what the bench's environment sets (the child processes inherit it). */
export const MAIL_COMPOSE_THREADS = process.env.MAIL_COMPOSE_THREADS ?? '1';

/** A raw baseline's measure: e-mails/s, and the size of each (the sink's bytes an e-mail). */
export interface RawMailRate {
  rate: number;
  bytesPerEmail: number;
}

/**
 * E-mails/s of the raw transport; its log line gives the CPU an e-mail cost the client and this
 * process (the sink). `warmup` e-mails go first, untimed, when the service is warmed up alike.
 */
export async function rawMailRate(res: Resources, sink: Sink, count: number, like: { kind: 'digest' | 'instant'; events: number }, warmup = 0): Promise<RawMailRate> {
  const child = await res.child('mail-baseline', {
    BENCH_CHILD_MODE: 'mail',
    SMTP_URL: sink.url,
    SMTP_MAX_CONNECTIONS: String(SMTP_MAX_CONNECTIONS),
    BENCH_MAIL_COUNT: String(count),
    BENCH_MAIL_CONCURRENCY: String(MAIL_CONCURRENCY),
    BENCH_MAIL_KIND: like.kind,
    BENCH_MAIL_EVENTS: String(like.events),
    BENCH_MAIL_WARMUP: String(warmup),
  });
  try {
    sink.reset();
    const accepted = sink.waitFor(count, 600_000);
    const done = child.next('done', { timeoutMs: 600_000 });
    const cpuSince = await cpuMeter(child.pid);
    const start = performance.now();
    child.send({ type: 'go' });
    const end = await accepted;
    const cpu = await cpuSince(count, 1000);
    const result = await done;
    if (result.failed) throw new Error(`the nodemailer baseline failed ${result.failed} messages: ${result.firstError}`);
    const rate = count / ((end - start) / 1000);
    const bytesPerEmail = sink.bytesPerMessage();
    log(`raw nodemailer pool: ${round(rate)} e-mails/s (${seconds(end - start)}) of ${bytesPerEmail} bytes; CPU s per 1,000 e-mails: client ${cpu.node}, the bench (sink) ${cpu.bench}`);
    return { rate, bytesPerEmail };
  } finally {
    await stopChild(res, child);
  }
}
