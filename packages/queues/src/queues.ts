import { Queue, type ConnectionOptions } from 'bullmq';
import { SCOPES, type Scope } from '@notify/core';
import { eventQueueName, jobIds, jobPolicies, QUEUE_NAMES, type DigestJob, type MailJob, type MatchEventsJob } from './catalog';

export interface QueueOptions {
  connection: ConnectionOptions;
  /** Redis key prefix; tests give each file its own. */
  prefix?: string;
  /** How often and how patiently a mail is retried (defaults: jobPolicies.mail). */
  mail?: { attempts: number; backoffMs: number };
}

export const DEFAULT_PREFIX = 'notify';

export interface RequestOptions {
  /** Remove a completed or failed job of the same id first, so the request is not taken for a duplicate. */
  replaceFinished?: boolean;
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
  readonly events: ReadonlyMap<Scope, Queue<MatchEventsJob>>;
  readonly digest: Queue<DigestJob>;
  readonly mail: Queue<MailJob>;

  constructor(readonly options: QueueOptions) {
    const base = { connection: options.connection, prefix: options.prefix ?? DEFAULT_PREFIX };
    this.events = new Map(SCOPES.map((scope) => [scope, new Queue<MatchEventsJob>(eventQueueName(scope), { ...base, defaultJobOptions: jobPolicies.match })]));
    this.digest = new Queue<DigestJob>(QUEUE_NAMES.digest, { ...base, defaultJobOptions: jobPolicies.digest });
    const mailPolicy = options.mail
      ? { ...jobPolicies.mail, attempts: options.mail.attempts, backoff: { type: 'exponential', delay: options.mail.backoffMs } }
      : jobPolicies.mail;
    this.mail = new Queue<MailJob>(QUEUE_NAMES.mail, { ...base, defaultJobOptions: mailPolicy });
  }

  all(): Queue[] {
    return [...this.events.values(), this.digest, this.mail] as Queue[];
  }

  /** Publishes events to match, in batches of at most `batchSize` per job. */
  async publishEvents(scope: Scope, events: Array<[string, string]>, batchSize = 100): Promise<void> {
    const queue = this.events.get(scope)!;
    const jobs = [];
    for (let i = 0; i < events.length; i += batchSize) jobs.push({ name: 'match', data: { events: events.slice(i, i + batchSize) } });
    if (jobs.length) await queue.addBulk(jobs);
  }

  /**
   * Asks for each (rule, period) digest once: a job with the same id waiting or running is that
   * request. With `replaceFinished`, a finished job of that id (failed after its retries, or
   * stalled too often) no longer stands in the way: the record says the work is still owed.
   */
  async requestDigests(digests: DigestJob[], delayMs = 0, options: RequestOptions = {}): Promise<void> {
    if (!digests.length) return;
    if (options.replaceFinished) await removeFinished(this.digest, digests.map(jobIds.digest));
    await this.digest.addBulk(digests.map((data) => ({ name: 'digest', data, opts: { jobId: jobIds.digest(data), ...(delayMs > 0 && { delay: delayMs }) } })));
  }

  /** Asks for each delivery's e-mail once; `replaceFinished` as for digests. */
  async requestMail(deliveryIds: string[], options: RequestOptions = {}): Promise<void> {
    if (!deliveryIds.length) return;
    if (options.replaceFinished) await removeFinished(this.mail, deliveryIds.map((deliveryId) => jobIds.mail({ deliveryId })));
    await this.mail.addBulk(deliveryIds.map((deliveryId) => ({ name: 'mail', data: { deliveryId }, opts: { jobId: jobIds.mail({ deliveryId }) } })));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((queue) => queue.close()));
  }
}
