import { parentPort, workerData } from 'node:worker_threads';
import { composeRequest, RenderFailedError, SharedRenders, type ComposeRequest } from './mail-composer';
import { rendererFor, type MailTemplates } from './renderer';
import { PermanentMailError } from './send-errors';
import type { ComposeReply } from './compose-threads';

/** A compose thread (composeInThreads): fills the templates its process compiled, and composes each request it is sent. */
const renders = new SharedRenders(rendererFor((workerData as { templates: MailTemplates }).templates));
const port = parentPort!;

port.on('message', ({ id, request }: { id: number; request: ComposeRequest }) => {
  let reply: ComposeReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const { envelope, raw } = composeRequest(renders, request);
    reply = { id, envelope, raw };
    // A message's bytes move to the process rather than being copied, unless they share a pool with others (under 4 KB).
    if (raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength) transfer = [raw.buffer as ArrayBuffer];
  } catch (error) {
    const kind = error instanceof RenderFailedError ? 'render' : error instanceof PermanentMailError ? 'permanent' : 'transient';
    reply = { id, error: { kind, message: (error as Error)?.message ?? String(error) } };
  }
  port.postMessage(reply, transfer);
});
