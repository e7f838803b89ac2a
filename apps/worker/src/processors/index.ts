import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Batcher, Slots, deliverPeriods, matchEvents, matchStoredEvents, sendDeliveries, type DuePeriod, type MatchResult, type OutagePause, type PipelineContext, type RuleIndex, type SendContext } from '@notify/pipeline';
import type { ClaimedDelivery } from '@notify/db';
import type { Logger } from '@notify/observability';
import { sendJobDeliveries, type JobCatalog, type JobKind } from '@notify/queues';
import type { MatchStored } from './match-here';

/** `log` is the job's own logger: every line carries its `job_id` and `queue`. */
export type Processor<T> = (job: Job<T>, log: Logger) => Promise<unknown>;

/** One processor per kind of job; a kind without one does not compile. Each is thin: parse, call the domain, return. */
export type ProcessorMap = { [K in JobKind]: Processor<JobCatalog[K]> };

export interface ProcessorContext {
  pipeline: PipelineContext;
  index: RuleIndex;
  send: SendContext | undefined;
  /** E-mails in flight at once in the process, over all send jobs (MAIL_CONCURRENCY; default 10). */
  mailConcurrency?: number;
  /** Match transactions running at once, shared by the match jobs of all scopes (default 2). */
  matchTransactions?: number;
  /** While the SMTP server is unavailable, the send queue pauses (for every sender) instead of spending retries. */
  sendPause?: OutagePause;
}

/** The most events one shared match transaction takes (a job's own batch of up to 1,000 goes whole). */
const MATCH_BATCH_EVENTS = 500;

/** The most (rule, period) pairs one shared deliver transaction takes. */
const DELIVER_BATCH_PERIODS = 200;

export interface Processors {
  jobs: ProcessorMap;
  /** Matches events without a job, in the transactions the match jobs share (InProcessMatching). */
  match(events: ReadonlyArray<readonly [string, string]>): Promise<MatchResult>;
  /** Matches events in the transaction that stores them (InProcessMatching's inStore). */
  matchStored: MatchStored;
  /** Delivers due periods without a job each, in the transactions the deliver jobs share (InProcessDelivery). */
  deliver(periods: readonly DuePeriod[]): Promise<void>;
  /** Sends deliveries this process made without a job (InProcessSending); what a job would retry goes to the send queue. */
  send(deliveryIds: readonly string[], log: Logger, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>): Promise<void>;
}

export function createProcessors(ctx: ProcessorContext): Processors {
  // The match jobs a process runs at once (MATCH_CONCURRENCY per scope's queue) share their
  // transactions: those that come while one runs go together in the next (Batcher), so a burst of
  // small jobs (single-event requests) costs a few commits rather than one each. At most
  // `matchTransactions` run at once. Each job answers with the result of the transaction it was in.
  const matches = new Batcher<ReadonlyArray<readonly [string, string]>, MatchResult>(
    async (jobs) => {
      const result = await matchEvents(ctx.pipeline, ctx.index, jobs.flat());
      return jobs.map(() => result);
    },
    { maxBatch: MATCH_BATCH_EVENTS, concurrency: ctx.matchTransactions ?? 2, weight: (events) => events.length },
  );
  // The same for deliver jobs: the 09:00 wave's thousands of periods falling due at once are
  // delivered a few hundred to a transaction. Each job answers with its transaction's deliveries.
  const periods = new Batcher<{ ruleId: string; periodKey: string }, number>(
    async (batch) => {
      const created = await deliverPeriods(ctx.pipeline, batch);
      return batch.map(() => created.length);
    },
    { maxBatch: DELIVER_BATCH_PERIODS, concurrency: 2 },
  );
  const mailSlots = new Slots(ctx.mailConcurrency ?? 20);
  const sendContext = (): SendContext => {
    if (!ctx.send) throw new Error('this process does not run the send role');
    return ctx.send;
  };
  /**
   * Sends deliveries (sendDeliveries), at most MAIL_CONCURRENCY e-mails in flight in the process,
   * whichever job they come from, if any (InProcessSending); their claims and records share statements. Once
   * the SMTP server cannot be reached, or `stopping` says so, the deliveries not yet started wait,
   * unclaimed (their outcome undefined); `unreachable` says why when it was the server.
   */
  const sendEach = async (deliveryIds: readonly string[], finalAttempt: boolean, log: Logger, stopping?: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>) => {
    const result = await sendDeliveries(sendContext(), deliveryIds, {
      slots: mailSlots,
      finalAttempt,
      stopping,
      claimed,
      onOutcome: (deliveryId, outcome) => {
        if (outcome.status === 'sent') log.info({ delivery_id: deliveryId, message_id: outcome.messageId }, 'e-mail sent');
        else if (outcome.status === 'cancelled') log.info({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail cancelled');
        else if (outcome.status === 'skipped') log.debug({ delivery_id: deliveryId, reason: outcome.reason }, 'e-mail skipped');
      },
    });
    // A server that took an e-mail is back, unless another of these found it away since.
    if (result.unreachable === undefined && result.sent && ctx.sendPause?.active) {
      ctx.sendPause.reset();
      log.info('SMTP server available again: mail resumed');
    }
    return result;
  };
  /** Pauses the send queue for every sender (queue.rateLimit) while the SMTP server cannot be reached. */
  const pauseSending = async (error: string, log: Logger) => {
    const pause = ctx.sendPause!.next();
    if (pause.started) log.warn({ pause_ms: pause.ms, error }, 'SMTP server unavailable: mail paused');
    await ctx.pipeline.queues.send.rateLimit(pause.ms);
  };
  const jobs: ProcessorMap = {
    match: async (job, log) => {
      const result = await matches.submit(job.data.events);
      log.debug({ ...result, job_events: job.data.events.length }, 'events matched');
      return result;
    },
    deliver: async (job, log) => {
      const deliveries = await periods.submit({ ruleId: job.data.ruleId, periodKey: job.data.periodKey });
      log.debug({ rule_id: job.data.ruleId, period_key: job.data.periodKey, deliveries }, 'period delivered');
      return { deliveries };
    },
    send: async (job, log) => {
      const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const { outcomes, unreachable, sent } = await sendEach(sendJobDeliveries(job.data), finalAttempt, log);
      if (unreachable !== undefined && ctx.sendPause) {
        // Back to the queue without spending an attempt; no sender takes a job until the pause ends.
        // When it runs again, what this run sent is sent already and is not claimed again.
        await pauseSending(unreachable, log);
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
  /**
   * The first attempt of deliveries made in this process (SendHere), as a send job's would be, with
   * what follows it handed to the send queue: a transient failure (recorded) to a job of its own
   * that waits the first backoff and has the attempts left (SendRequestOptions.afterFirstAttempt);
   * an unreachable server's waiting deliveries to jobs, with the queue paused, as a job's would be;
   * and once `stopping` (the process shutting down), those not started yet to jobs, for the next process.
   */
  const sendInProcess = async (deliveryIds: readonly string[], log: Logger, stopping: () => boolean, claimed?: ReadonlyMap<string, ClaimedDelivery>): Promise<void> => {
    const queues = ctx.pipeline.queues;
    const { outcomes, unreachable } = await sendEach(deliveryIds, queues.sendPolicy.attempts <= 1, log, stopping, claimed);
    const waiting = deliveryIds.filter((_, i) => {
      const outcome = outcomes[i];
      return outcome === undefined || (outcome.status === 'failed' && outcome.unavailable === true);
    });
    const retry = deliveryIds.filter((_, i) => {
      const outcome = outcomes[i];
      return outcome?.status === 'failed' && !outcome.permanent && !outcome.unavailable && queues.sendPolicy.attempts > 1;
    });
    if (unreachable !== undefined && ctx.sendPause) await pauseSending(unreachable, log);
    await queues.requestSend(waiting);
    await queues.requestSend(retry, { afterFirstAttempt: true });
  };
  return {
    jobs,
    send: sendInProcess,
    match: (events) => matches.submit(events),
    matchStored: {
      now: () => ctx.pipeline.now(),
      match: (tx, events, now) => matchStoredEvents(ctx.pipeline, ctx.index, tx, events, now),
    },
    deliver: async (due) => {
      await Promise.all(due.map((period) => periods.submit(period)));
    },
  };
}
