import { SCOPES, type Scope } from '@notify/core';
import type { JobsOptions } from 'bullmq';

/**
 * Every queue, its payload and its retry policy, in one place (conventions §3).
 * Queues are transport: PostgreSQL holds the record, and the reconciler rebuilds
 * any job Redis loses from it.
 */

/** Events of one scope to match: a batch, so thousands of events a second stay cheap. */
export interface MatchEventsJob {
  /** [organizationId, eventId] pairs; the events themselves are read from PostgreSQL. */
  events: Array<[string, string]>;
}

/** Turn a rule's pending matches of one period into deliveries (one per member). */
export interface DigestJob {
  ruleId: string;
  periodKey: string;
}

/** Send one e-mail. */
export interface MailJob {
  deliveryId: string;
}

export interface JobCatalog {
  match: MatchEventsJob;
  digest: DigestJob;
  mail: MailJob;
}

export type JobKind = keyof JobCatalog;

export const EVENT_QUEUE_PREFIX = 'events.';

export function eventQueueName(scope: Scope): string {
  return `${EVENT_QUEUE_PREFIX}${scope}`;
}

export const QUEUE_NAMES = {
  events: SCOPES.map(eventQueueName),
  digest: 'digests',
  mail: 'mail',
} as const;

export function allQueueNames(): string[] {
  return [...QUEUE_NAMES.events, QUEUE_NAMES.digest, QUEUE_NAMES.mail];
}

/** Deterministic ids: the same work asked for twice is one job (conventions §9). */
export const jobIds = {
  digest: (job: DigestJob) => `digest.${job.ruleId}.${job.periodKey}`,
  mail: (job: MailJob) => `mail.${job.deliveryId}`,
};

const keep = { removeOnComplete: { age: 3600, count: 1000 }, removeOnFail: { age: 7 * 24 * 3600 } };

/**
 * Retry policy per kind. Matching and digests fail only when PostgreSQL does:
 * retry briefly, the reconciler covers longer outages. Mail retries for more than
 * a day with exponential backoff, so an SMTP server that is down for an hour loses nothing.
 */
export const jobPolicies: Record<JobKind, JobsOptions> = {
  match: { attempts: 8, backoff: { type: 'exponential', delay: 500 }, ...keep },
  // Completed digest jobs are removed at once: a later request for the same
  // period (late matches) must be able to run again; the database keeps it idempotent.
  digest: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600 } },
  mail: { attempts: 14, backoff: { type: 'exponential', delay: 5000 }, ...keep },
};

/** How long a job may run before BullMQ considers its worker dead and hands it to another. */
export const LOCK_DURATION_MS = 30_000;
