import { UnrecoverableError, type Job } from 'bullmq';
import { deliverPeriod, matchEvents, sendDelivery, type MailerContext, type PipelineContext, type RuleIndex } from '@notify/pipeline';
import type { JobCatalog, JobKind } from '@notify/queues';

export type Processor<T> = (job: Job<T>) => Promise<unknown>;

/** One processor per kind of job; a kind without one does not compile. Each is thin: parse, call the domain, return. */
export type ProcessorMap = { [K in JobKind]: Processor<JobCatalog[K]> };

export interface ProcessorContext {
  pipeline: PipelineContext;
  index: RuleIndex;
  mailer: MailerContext | undefined;
}

export function createProcessors(ctx: ProcessorContext): ProcessorMap {
  return {
    match: async (job) => matchEvents(ctx.pipeline, ctx.index, job.data.events),
    digest: async (job) => ({ deliveries: (await deliverPeriod(ctx.pipeline, job.data.ruleId, job.data.periodKey)).length }),
    mail: async (job) => {
      if (!ctx.mailer) throw new Error('this process does not run the mailer role');
      const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const outcome = await sendDelivery(ctx.mailer, job.data.deliveryId, { finalAttempt });
      if (outcome.status === 'failed') {
        // Recorded already; a permanent failure is not retried, a transient one is, with backoff.
        if (outcome.permanent) throw new UnrecoverableError(outcome.error);
        throw new Error(outcome.error);
      }
      return outcome;
    },
  };
}
