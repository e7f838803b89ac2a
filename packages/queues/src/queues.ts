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

  async requestDigests(digests: DigestJob[], delayMs = 0): Promise<void> {
    if (!digests.length) return;
    await this.digest.addBulk(digests.map((data) => ({ name: 'digest', data, opts: { jobId: jobIds.digest(data), ...(delayMs > 0 && { delay: delayMs }) } })));
  }

  async requestMail(deliveryIds: string[]): Promise<void> {
    if (!deliveryIds.length) return;
    await this.mail.addBulk(deliveryIds.map((deliveryId) => ({ name: 'mail', data: { deliveryId }, opts: { jobId: jobIds.mail({ deliveryId }) } })));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((queue) => queue.close()));
  }
}
