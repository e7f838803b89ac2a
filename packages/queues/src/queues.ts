import { Queue, type ConnectionOptions } from 'bullmq';
import { SCOPES, type Scope } from '@notify/core';
import { jobIds, jobPolicies, matchQueueName, queueKeyPrefix, QUEUE_NAMES, SEND_BATCH, type DeliverJob, type MatchJob, type SendJob } from './catalog';

export interface QueueOptions {
  connection: ConnectionOptions;
  /** Redis key prefix; tests give each file its own. */
  prefix?: string;
  /** How often and how patiently a send is retried (defaults: jobPolicies.send). */
  send?: { attempts: number; backoffMs: number };
}

export const DEFAULT_PREFIX = 'notify';

export interface RequestOptions {
  /** Remove a completed or failed job of the same id first, so the request is not taken for a duplicate. */
  replaceFinished?: boolean;
}

export interface SendRequestOptions extends RequestOptions {
  /**
   * The deliveries had their first attempt already, in the process that made them (a transient
   * failure, recorded): each goes in a job of its own, as with `replaceFinished`, that waits the
   * policy's first backoff and has one attempt fewer, so a delivery gets the policy's attempts in all.
   */
  afterFirstAttempt?: boolean;
}

/** Removes the jobs among `ids` that have finished (completed or failed); others are left alone. */
async function removeFinished(queue: Queue, ids: string[]): Promise<void> {
  const CHUNK = 500;
  for (let i = 0; i < ids.length; i += CHUNK) {
    await Promise.all(
      ids.slice(i, i + CHUNK).map(async (id) => {
        const state = await queue.getJobState(id);
        // A job that is being removed or moved meanwhile is fine either way: the add that follows is idempotent.
        if (state === 'completed' || state === 'failed') await queue.remove(id).catch(() => 0);
      }),
    );
  }
}

/** The producer side of every queue, typed by the catalog. */
export class Queues {
  readonly match: ReadonlyMap<Scope, Queue<MatchJob>>;
  readonly deliver: Queue<DeliverJob>;
  readonly send: Queue<SendJob>;
  /** How often a delivery's e-mail is tried in all, and the first wait between tries (MAIL_ATTEMPTS, MAIL_BACKOFF_MS). */
  readonly sendPolicy: { attempts: number; backoffMs: number };

  constructor(readonly options: QueueOptions) {
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    const base = (name: string) => ({ connection: options.connection, prefix: queueKeyPrefix(prefix, name) });
    this.match = new Map(SCOPES.map((scope) => [scope, new Queue<MatchJob>(matchQueueName(scope), { ...base(matchQueueName(scope)), defaultJobOptions: jobPolicies.match })]));
    this.deliver = new Queue<DeliverJob>(QUEUE_NAMES.deliver, { ...base(QUEUE_NAMES.deliver), defaultJobOptions: jobPolicies.deliver });
    this.sendPolicy = options.send ?? { attempts: jobPolicies.send.attempts!, backoffMs: (jobPolicies.send.backoff as { delay: number }).delay };
    const sendJobs = { ...jobPolicies.send, attempts: this.sendPolicy.attempts, backoff: { type: 'exponential', delay: this.sendPolicy.backoffMs } };
    this.send = new Queue<SendJob>(QUEUE_NAMES.send, { ...base(QUEUE_NAMES.send), defaultJobOptions: sendJobs });
  }

  all(): Queue[] {
    return [...this.match.values(), this.deliver, this.send] as Queue[];
  }

  /** Asks for stored events to be matched, in batches of at most `batchSize` per job. */
  async requestMatch(scope: Scope, events: Array<[string, string]>, batchSize = 100): Promise<void> {
    const queue = this.match.get(scope)!;
    const jobs = [];
    for (let i = 0; i < events.length; i += batchSize) jobs.push({ name: 'match', data: { events: events.slice(i, i + batchSize) } });
    if (jobs.length) await queue.addBulk(jobs);
  }

  /**
   * Asks for each (rule, period) to be delivered once: a job with the same id waiting or running
   * is that request. With `replaceFinished`, a finished job of that id (failed after its retries,
   * or stalled too often) no longer stands in the way: the record says the work is still owed.
   */
  async requestDeliver(periods: DeliverJob[], delayMs = 0, options: RequestOptions = {}): Promise<void> {
    if (!periods.length) return;
    if (options.replaceFinished) await removeFinished(this.deliver, periods.map(jobIds.deliver));
    await this.deliver.addBulk(periods.map((data) => ({ name: 'deliver', data, opts: { jobId: jobIds.deliver(data), ...(delayMs > 0 && { delay: delayMs }) } })));
  }

  /**
   * Asks for each delivery to be sent once, SEND_BATCH to a job (deliveries asked for together
   * were made together). With `replaceFinished` (as for requestDeliver) each goes in a job of its
   * own, known by the delivery, so a finished job of it can be found and replaced (and so with
   * `afterFirstAttempt`, see SendRequestOptions, which replaces a finished job too).
   */
  async requestSend(deliveryIds: readonly string[], options: SendRequestOptions = {}): Promise<void> {
    if (!deliveryIds.length) return;
    const own = options.replaceFinished || options.afterFirstAttempt;
    const batch = own ? 1 : SEND_BATCH;
    const jobs: SendJob[] = [];
    for (let i = 0; i < deliveryIds.length; i += batch) jobs.push({ deliveryIds: deliveryIds.slice(i, i + batch) });
    if (own) await removeFinished(this.send, jobs.map(jobIds.send));
    const retry = options.afterFirstAttempt ? { delay: this.sendPolicy.backoffMs, attempts: Math.max(1, this.sendPolicy.attempts - 1) } : {};
    await this.send.addBulk(jobs.map((data) => ({ name: 'send', data, opts: { jobId: jobIds.send(data), ...retry } })));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((queue) => queue.close()));
  }
}
