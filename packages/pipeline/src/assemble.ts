import type { Logger } from '@notify/observability';
import { DeliverStage } from './deliver/deliver-stage';
import { ALL_FAST_PATHS, type FastPaths } from './fast-paths';
import { DeliverInProcess, deliverQueue, type ToDeliver } from './hand-offs/to-deliver';
import { MatchInProcess, matchQueue, type MatchQueueOptions, type ToMatch } from './hand-offs/to-match';
import { SendInProcess, sendQueue, type ToSend } from './hand-offs/to-send';
import { IngestStage } from './ingest/ingest-stage';
import { MatchStage } from './match/match-stage';
import type { PipelineResources } from './resources';
import { RuleIndex } from './rules/rule-index';
import { ScheduleStage } from './schedule/schedule-stage';
import type { Destination } from './send/destination';
import { OutagePause } from './send/outage-pause';
import { SendStage } from './send/send-stage';

/** The stages a process runs besides the API (config's ROLES). */
export type StageRole = 'match' | 'schedule' | 'deliver' | 'send';

export interface AssembleOptions {
  /** The pool, queues, clock and metrics of the stages. */
  resources: PipelineResources;
  /** Ingest's own pool, when it differs (the API's, whose statements are bounded in time). */
  ingestResources?: Pick<PipelineResources, 'db' | 'metrics'>;
  /** The roles this process runs: a stage is built for each; ingest and deliver (flushes, test sends) always are. */
  roles: readonly StageRole[];
  /** Which fast paths join the stages this process runs (default: all). */
  fastPaths?: FastPaths;
  log: Logger;
  match?: { index?: RuleIndex; instantCoalesceMs: number; transactions?: number };
  ingest?: { lingerMs?: number } & MatchQueueOptions;
  /** With the send role: where messages go, and how sending is bounded. */
  send?: { destination: Destination; concurrency?: number; claimTimeoutMs?: number; outageMaxPauseMs: number };
}

/** The pipeline of one process, assembled once: its stages, and the hand-offs between them. */
export interface Pipeline {
  readonly fastPaths: Readonly<FastPaths>;
  ingest: IngestStage;
  /** Always there: an operator's flush and a customer's test send make deliveries in any process. */
  deliver: DeliverStage;
  match?: MatchStage;
  schedule?: ScheduleStage;
  send?: SendStage;
  /** The fast paths' in-process work, for metrics: how much each holds now. */
  inProcess: { match?: MatchInProcess; deliver?: DeliverInProcess; send?: SendInProcess };
  /** Takes no more work in process and waits for what the hand-offs took. */
  close(): Promise<void>;
}

/**
 * Builds a process's stages with their resources and joins each pair of neighbours by its hand-off:
 * in this process, when it runs both stages and that fast path is on; through the queue otherwise.
 */
export function assemblePipeline(options: AssembleOptions): Pipeline {
  const { resources, roles, log } = options;
  const fastPaths = options.fastPaths ?? ALL_FAST_PATHS;
  const runs = (role: StageRole) => roles.includes(role);
  const inProcess: Pipeline['inProcess'] = {};

  let send: SendStage | undefined;
  let toSend: ToSend = sendQueue(resources);
  if (runs('send')) {
    if (!options.send) throw new Error('the send role needs a destination');
    send = new SendStage(resources, {
      destination: options.send.destination,
      concurrency: options.send.concurrency,
      claimTimeoutMs: options.send.claimTimeoutMs,
      pause: new OutagePause(1000, options.send.outageMaxPauseMs),
    });
    if (fastPaths.sendInProcess) {
      // Its lines say the work had no job: `in_process` and the stage, where a job's name its id and queue.
      toSend = inProcess.send = new SendInProcess(resources, send, { claimWhenMade: fastPaths.claimWhenMade, log: log.child({ stage: 'send', in_process: true }) });
    }
  }

  const deliver = new DeliverStage(resources, toSend);
  let toDeliver: ToDeliver = deliverQueue(resources);
  if (runs('deliver') && fastPaths.deliverInProcess) toDeliver = inProcess.deliver = new DeliverInProcess(deliver, toDeliver, { log });
  const schedule = runs('schedule') ? new ScheduleStage(resources, toDeliver) : undefined;

  let match: MatchStage | undefined;
  let toMatch: ToMatch = matchQueue(resources, options.ingest);
  if (runs('match')) {
    const settings = options.match ?? { instantCoalesceMs: 60_000 };
    match = new MatchStage(resources, { index: settings.index ?? new RuleIndex(), instantCoalesceMs: settings.instantCoalesceMs, transactions: settings.transactions, toSend });
    if (fastPaths.matchInProcess || fastPaths.matchInStore) {
      const here = new MatchInProcess(match, toMatch, { matchInStore: fastPaths.matchInStore, log });
      inProcess.match = here;
      if (fastPaths.matchInProcess) toMatch = here;
    }
  }
  const ingest = new IngestStage(options.ingestResources ?? resources, {
    toMatch,
    matchInStore: inProcess.match?.inStore,
    lingerMs: options.ingest?.lingerMs,
  });

  return {
    fastPaths,
    ingest,
    deliver,
    match,
    schedule,
    send,
    inProcess,
    async close() {
      await Promise.allSettled([inProcess.match?.close(), inProcess.deliver?.close(), inProcess.send?.close()]);
    },
  };
}
