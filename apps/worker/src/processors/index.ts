import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { deliverPeriod, matchEvents, sendDelivery, type OutagePause, type PipelineContext, type RuleIndex, type SendContext } from '@notify/pipeline';
import type { Logger } from '@notify/observability';
import type { JobCatalog, JobKind } from '@notify/queues';

/** `log` is the job's own logger: every line carries its `job_id` and `queue`. */
export type Processor<T> = (job: Job<T>, log: Logger) => Promise<unknown>;

/** One processor per kind of job; a kind without one does not compile. Each is thin: parse, call the domain, return. */
export type ProcessorMap = { [K in JobKind]: Processor<JobCatalog[K]> };

export interface ProcessorContext {
  pipeline: PipelineContext;
  index: RuleIndex;
  send: SendContext | undefined;
  /** While the SMTP server is unavailable, the send queue pauses (for every sender) instead of spending retries. */
  sendPause?: OutagePause;
}

export function createProcessors(ctx: ProcessorContext): ProcessorMap {
  return {
    match: async (job, log) => {
      const result = await matchEvents(ctx.pipeline, ctx.index, job.data.events);
      log.debug(result, 'events matched');
      return result;
    },
    deliver: async (job, log) => {
      const deliveries = (await deliverPeriod(ctx.pipeline, job.data.ruleId, job.data.periodKey)).length;
      log.debug({ rule_id: job.data.ruleId, period_key: job.data.periodKey, deliveries }, 'period delivered');
      return { deliveries };
    },
    send: async (job, log) => {
      if (!ctx.send) throw new Error('this process does not run the send role');
      const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const outcome = await sendDelivery(ctx.send, job.data.deliveryId, { finalAttempt });
      const deliveryId = job.data.deliveryId;
      if (outcome.status === 'failed' && outcome.unavailable && ctx.sendPause) {
        // Back to the queue without spending an attempt; no sender takes a job until the pause ends.
        const pause = ctx.sendPause.next();
        if (pause.started) log.warn({ pause_ms: pause.ms, error: outcome.error }, 'SMTP server unavailable: mail paused');
        await ctx.pipeline.queues.send.rateLimit(pause.ms);
        throw Worker.RateLimitError();
      }
      if (outcome.status === 'sent' && ctx.sendPause?.active) {
        ctx.sendPause.reset();
        log.info('SMTP server available again: mail resumed');
      }
      if (outcome.status === 'sent') log.info({ delivery_id: deliveryId, message_id: outcome.messageId }, 'e-mail sent');
      else if (outcome.status === 'cancelled') log.info({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail cancelled');
      else if (outcome.status === 'skipped') log.debug({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail skipped');
      if (outcome.status === 'failed') {
        // Recorded already; a permanent failure is not retried, a transient one is, with backoff.
        if (outcome.permanent) throw new UnrecoverableError(outcome.error);
        throw new Error(outcome.error);
      }
      return outcome;
    },
  };
}
