import { SCOPES, type Scope } from '@notify/core';
import type { JobsOptions } from 'bullmq';

/**
 * Every queue, its payload and its retry policy, in one place (conventions §3). Each stage of
 * the pipeline that runs as jobs has one name, used by its queue, its job, its role and its
 * folder in packages/pipeline: match, deliver, send (GLOSSARY.md in packages/core).
 * Queues are transport: PostgreSQL holds the record, and the reconciler rebuilds
 * any job Redis loses from it.
 */

/** Events of one scope to match: a batch, so thousands of events a second stay cheap. */
export interface MatchJob {
  /** [organizationId, eventId] pairs; the events themselves are read from PostgreSQL. */
  events: Array<[string, string]>;
}

/** Turn a rule's pending matches of one period into deliveries (one per member). */
export interface DeliverJob {
  ruleId: string;
  periodKey: string;
}

/**
 * Send deliveries' e-mails: those made together (a period's members, an instant burst's rules),
 * up to SEND_BATCH, so a job's cost in Redis is shared; each delivery is still claimed, sent and
 * recorded on its own, and a retried job sends only those still owed.
 */
export interface SendJob {
  deliveryIds: string[];
}

/** The most deliveries one send job carries. */
export const SEND_BATCH = 20;

/** The deliveries of a send job. */
export function sendJobDeliveries(job: SendJob): string[] {
  return job.deliveryIds;
}

export interface JobCatalog {
  match: MatchJob;
  deliver: DeliverJob;
  send: SendJob;
}

export type JobKind = keyof JobCatalog;

export const MATCH_QUEUE_PREFIX = 'match.';

/** Matching has a queue per scope, so a flood of one kind of event does not hold up the others. */
export function matchQueueName(scope: Scope): string {
  return `${MATCH_QUEUE_PREFIX}${scope}`;
}

export const QUEUE_NAMES = {
  match: SCOPES.map(matchQueueName),
  deliver: 'deliver',
  send: 'send',
} as const;

/**
 * BullMQ's key prefix of one queue: `<QUEUE_PREFIX>:{<queue>}`. The braces are a Redis Cluster hash
 * tag: BullMQ's scripts touch several keys of a queue at once, so a queue's keys must share a slot,
 * and one tag per queue spreads the queues over the cluster's shards. On one node they are just
 * part of the name. Every producer and worker of a queue must use it.
 */
export function queueKeyPrefix(prefix: string, queueName: string): string {
  return `${prefix}:{${queueName}}`;
}

export function allQueueNames(): string[] {
  return [...QUEUE_NAMES.match, QUEUE_NAMES.deliver, QUEUE_NAMES.send];
}

/** Deterministic ids: the same work asked for twice is one job (conventions §9). */
export const jobIds = {
  deliver: (job: DeliverJob) => `deliver.${job.ruleId}.${job.periodKey}`,
  /** A job of one delivery is known by it (the reconciler and retries ask for one at a time); a batch by its first and size. */
  send: (job: SendJob) => (job.deliveryIds.length === 1 ? `send.${job.deliveryIds[0]}` : `send.${job.deliveryIds[0]}.${job.deliveryIds.length}`),
};

const keep = { removeOnComplete: { age: 3600, count: 1000 }, removeOnFail: { age: 7 * 24 * 3600 } };

/**
 * Retry policy per kind. Matching and delivering fail only when PostgreSQL does:
 * retry briefly, the reconciler covers longer outages. Sending retries with exponential backoff
 * for about 11 hours (14 attempts: 13 waits of 5 s doubling, 5 s × (2¹³ − 1) ≈ 11.4 h), so an SMTP
 * server that answers 4xx for hours loses nothing; an unreachable server costs no attempt at all
 * (the send role pauses instead). MAIL_ATTEMPTS and MAIL_BACKOFF_MS change these two numbers.
 */
export const jobPolicies: Record<JobKind, JobsOptions> = {
  match: { attempts: 8, backoff: { type: 'exponential', delay: 500 }, ...keep },
  // Completed deliver jobs are removed at once: a later request for the same
  // period (late matches) must be able to run again; the database keeps it idempotent.
  deliver: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600 } },
  send: { attempts: 14, backoff: { type: 'exponential', delay: 5000 }, ...keep },
};

/** How long a job may run before BullMQ considers its worker dead and hands it to another. */
export const LOCK_DURATION_MS = 30_000;
