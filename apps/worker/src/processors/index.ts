import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Pipeline } from '@notify/pipeline';
import type { Logger } from '@notify/observability';
import { sendJobDeliveries, type JobCatalog, type JobKind } from '@notify/queues';

/** `log` is the job's own logger: every line carries its `job_id` and `queue`. */
export type Processor<T> = (job: Job<T>, log: Logger) => Promise<unknown>;

/** One processor per kind of job; a kind without one does not compile. Each is thin: parse, call the stage, return. */
export type ProcessorMap = { [K in JobKind]: Processor<JobCatalog[K]> };

function stageOf<T>(stage: T | undefined, role: string): T {
  if (!stage) throw new Error(`this process does not run the ${role} role`);
  return stage;
}

/** The jobs of each queue, run by the process's stages (their transactions shared with the work handed to them in process). */
export function createProcessors(pipeline: Pipeline): ProcessorMap {
  return {
    match: async (job, log) => {
      const result = await stageOf(pipeline.match, 'match').match(job.data.events);
      log.debug({ ...result, job_events: job.data.events.length }, 'events matched');
      return result;
    },
    deliver: async (job, log) => {
      const deliveries = await pipeline.deliver.deliver({ ruleId: job.data.ruleId, periodKey: job.data.periodKey });
      log.debug({ rule_id: job.data.ruleId, period_key: job.data.periodKey, deliveries }, 'period delivered');
      return { deliveries };
    },
    send: async (job, log) => {
      const send = stageOf(pipeline.send, 'send');
      const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const { outcomes, unreachable, sent } = await send.sendForJob(sendJobDeliveries(job.data), finalAttempt, log);
      if (unreachable !== undefined && send.pause) {
        // Back to the queue without spending an attempt; no sender takes a job until the pause ends.
        // When it runs again, what this run sent is sent already and is not claimed again.
        await send.pauseSending(unreachable, log);
        throw Worker.RateLimitError();
      }
      // Failures are recorded already. A transient one (or an unreachable server without a pause)
      // retries the job with backoff, which claims only the deliveries still owed; a permanent
      // one is not retried.
      const failures = outcomes.filter((outcome) => outcome?.status === 'failed');
      const transient = failures.find((outcome) => !outcome.permanent);
      if (transient) throw new Error(transient.error);
      if (failures.length && failures.length === outcomes.length) throw new UnrecoverableError(failures[0]!.error);
      return outcomes.length === 1 ? outcomes[0] : { sent, outcomes: outcomes.map((outcome) => outcome?.status ?? 'waiting') };
    },
  };
}
