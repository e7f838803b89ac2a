import { Worker } from 'node:worker_threads';
import { markCrlfOnly } from './dot-stuffing';
import { composeInLoop, RenderFailedError, type ComposeRequest, type MailComposer } from './mail-composer';
import type { MimeMessage } from './mime-message';
import { rendererFor, type MailTemplates } from './renderer';
import { PermanentMailError, TransientMailError } from './send-errors';

/** What a compose thread answers a request: its message, or why there is none. */
export type ComposeReply =
  | { id: number; envelope: MimeMessage['envelope']; raw: Uint8Array }
  | { id: number; error: { kind: 'render' | 'permanent' | 'transient'; message: string } };

interface Pending {
  resolve: (message: MimeMessage) => void;
  reject: (error: Error) => void;
}

/** One thread: started with the composer (and again by the first request after it stopped), its requests in flight by id. */
interface ComposeThread {
  worker: Worker | undefined;
  pending: Map<number, Pending>;
}

// Run from source (tests, development), the thread's module is TypeScript: an entry of plain
// JavaScript loads it through tsx. Built, the compiled module starts directly.
const fromSource = import.meta.url.endsWith('.ts');
const entry = new URL(fromSource ? './compose-thread-entry.mjs' : './compose-thread.js', import.meta.url);
const threadModule = new URL('./compose-thread.ts', import.meta.url).href;

/** Which of `threads` threads composes a content: every recipient of it the same one, whose SharedRenders has it. */
function threadOfContent(shareKey: string, threads: number): number {
  let hash = 0;
  for (let i = 0; i < shareKey.length; i++) hash = (hash * 31 + shareKey.charCodeAt(i)) | 0;
  return Math.abs(hash) % threads;
}

/**
 * E-mails of at most this many events are composed in the event loop: an alert of one event is
 * cheap to compose there, and handing it to a thread and back (the request cloned, the bytes
 * moved, a message each way) costs a good part as much again, so alerts in the thread cost more
 * CPU an event in all (measured: see commit de47c17).
 */
const IN_LOOP_MAX_EVENTS = 1;

function failure(error: { kind: string; message: string }): Error {
  if (error.kind === 'render') return new RenderFailedError(error.message);
  return error.kind === 'permanent' ? new PermanentMailError(error.message) : new TransientMailError(error.message);
}

export interface ComposeThreadsOptions {
  /** How many threads compose; at least 1. */
  threads: number;
  /** Told when a thread stops unasked (its requests in flight fail with RenderFailedError; the next request starts it again). */
  onThreadError?: (error: Error) => void;
}

/**
 * Composes e-mails in worker threads of their own: each request (what the e-mail shows, its
 * recipient and headers) goes to a thread, which renders and encodes it and hands its bytes back
 * (moved, not copied); an alert of one event is composed in the loop (IN_LOOP_MAX_EVENTS).
 * Rendering and composing a digest is most of its CPU (measured: see commit de47c17), which the
 * process's event loop, that also talks to PostgreSQL, Redis and the SMTP server, no longer
 * spends. The threads fill the templates the process compiled (`templates`) and never load MJML. A
 * thread that dies fails its requests in flight with RenderFailedError (their deliveries are tried
 * again) and is started again by the next request.
 */
export function composeInThreads(templates: MailTemplates, options: ComposeThreadsOptions): MailComposer {
  const count = Math.max(1, Math.floor(options.threads));
  const threads: ComposeThread[] = Array.from({ length: count }, () => ({ worker: undefined, pending: new Map() }));
  let inLoop: MailComposer | undefined;
  let nextId = 0;
  let roundRobin = 0;
  let closed = false;

  const stopped = (thread: ComposeThread, worker: Worker, error: Error) => {
    if (thread.worker !== worker) return;
    thread.worker = undefined;
    const pending = [...thread.pending.values()];
    thread.pending.clear();
    for (const request of pending) request.reject(new RenderFailedError(`compose thread stopped: ${error.message}`, { cause: error }));
    if (!closed) options.onThreadError?.(error);
  };

  const start = (thread: ComposeThread): Worker => {
    const worker = new Worker(entry, { workerData: { templates, module: threadModule } });
    thread.worker = worker;
    // Only requests in flight keep the process alive (see compose).
    worker.unref();
    worker.on('message', (reply: ComposeReply) => {
      const request = thread.pending.get(reply.id);
      if (!request) return;
      thread.pending.delete(reply.id);
      if (thread.pending.size === 0) worker.unref();
      if ('error' in reply) request.reject(failure(reply.error));
      // composeMessage's bytes: CRLF lines only, as it marks them in the thread (the mark stays there).
      else request.resolve({ envelope: reply.envelope, raw: markCrlfOnly(Buffer.from(reply.raw.buffer, reply.raw.byteOffset, reply.raw.byteLength)) });
    });
    worker.on('error', (error) => stopped(thread, worker, error));
    worker.on('exit', (code) => stopped(thread, worker, new Error(`exited with code ${code}`)));
    return worker;
  };

  // Started now, not by the first e-mail: booting a thread (an isolate and the modules it loads)
  // is then not what a wave's first e-mails wait for and share the cores with (measured: see
  // commit a781467).
  for (const thread of threads) start(thread);

  return {
    compose(request: ComposeRequest): Promise<MimeMessage> {
      if (closed) return Promise.reject(new RenderFailedError('the composer is closed'));
      if (request.eventCount <= IN_LOOP_MAX_EVENTS) {
        try {
          inLoop ??= composeInLoop(rendererFor(templates));
        } catch (error) {
          return Promise.reject(new RenderFailedError(`rendering failed: ${(error as Error).message}`, { cause: error }));
        }
        return inLoop.compose(request);
      }
      const index = count === 1 ? 0 : request.shareKey === null ? roundRobin++ % count : threadOfContent(request.shareKey, count);
      const thread = threads[index]!;
      const worker = thread.worker ?? start(thread);
      const id = nextId++;
      return new Promise<MimeMessage>((resolve, reject) => {
        try {
          worker.postMessage({ id, request });
        } catch (error) {
          // A value the request cannot carry to a thread (none the send stage makes).
          reject(new RenderFailedError(`compose request not sent: ${(error as Error).message}`, { cause: error }));
          return;
        }
        if (thread.pending.size === 0) worker.ref();
        thread.pending.set(id, { resolve, reject });
      });
    },
    async close(): Promise<void> {
      closed = true;
      await Promise.all(threads.map((thread) => thread.worker?.terminate()));
    },
  };
}
