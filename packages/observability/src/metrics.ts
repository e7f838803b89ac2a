import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FREQUENCIES, SCOPES } from '@notify/core';

/** Why an e-mail attempt did not end in an SMTP accept. */
/**
 * `unavailable`: the SMTP server could not be reached; the send role pauses and the e-mail waits.
 * `suppressed`: not sent, the member's address bounces.
 */
export type MailFailureReason = 'transient' | 'permanent' | 'unavailable' | 'cancelled' | 'suppressed';

/**
 * The (reason, final) pairs the mailer reports: a permanent refusal and a cancellation are always
 * final, an unreachable server never (the e-mail waits without spending a try).
 */
export const MAIL_FAILURE_SERIES: ReadonlyArray<{ reason: MailFailureReason; final: boolean }> = [
  { reason: 'transient', final: false },
  { reason: 'transient', final: true },
  { reason: 'permanent', final: true },
  { reason: 'unavailable', final: false },
  { reason: 'cancelled', final: true },
  { reason: 'suppressed', final: true },
];

/** What a queue depth is read from: a BullMQ Queue fits. */
export interface QueueCountsSource {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

/** The queue states reported as depths (completed jobs are history, not depth). */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/**
 * Domain hooks the pipeline calls through its contexts (`PipelineContext.metrics`,
 * `IngestContext.metrics`); the pipeline declares the same shape without importing this package.
 */
export interface PipelineMetricsHooks {
  eventsIngested(scope: string, accepted: number, duplicates: number): void;
  /** One ingest statement stored the events of `calls` calls. */
  ingestStatement(calls: number): void;
  matched(scope: string, frequency: string, count: number): void;
  /** Matches held back by silences (recorded, never e-mailed). */
  silenced(count: number): void;
  /** An SMTP server (or the outbox) accepted an e-mail; `latencyMs` runs from the first event's arrival. */
  mailSent(frequency: string, latencyMs: number | null): void;
  mailFailed(reason: MailFailureReason, final: boolean): void;
}

export interface Metrics {
  readonly registry: Registry;
  /** The Content-Type of `render()`'s text. */
  readonly contentType: string;
  readonly pipeline: PipelineMetricsHooks;
  /** One HTTP request answered: route is the route pattern (`not_found` when none matched). */
  httpRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** One job of `queue` finished processing (completed, or failed this attempt). */
  jobFinished(queue: string, status: 'completed' | 'failed', seconds: number): void;
  /** Queue depths are read from these queues on every scrape (each read bounded by `queueCountTimeoutMs`). */
  trackQueues(queues: () => readonly QueueCountsSource[]): void;
  /** Work of `stage` this process took without a job and has not finished, read on every scrape. */
  trackInProcess(stage: 'match' | 'deliver' | 'send', pending: () => number): void;
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>;
}

export interface MetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
  /** How long a scrape waits for Redis to count a queue's jobs. Default 1000 ms. */
  queueCountTimeoutMs?: number;
}

const LATENCY_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400, 31 * 86_400];
/** Ingest calls one statement took together (INGEST_LINGER_MS: single-event requests that come together). */
const STATEMENT_CALLS_BUCKETS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * One registry per process (tests make their own): the domain counters, the delivery latency,
 * HTTP and job durations, and queue depths read from Redis at scrape time.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const countTimeoutMs = options.queueCountTimeoutMs ?? 1000;

  const eventsIngested = new Counter({
    name: 'notify_events_ingested_total',
    help: 'Events stored by ingest (HTTP or in-platform), by scope.',
    labelNames: ['scope'],
    registers,
  });
  const eventsDuplicate = new Counter({
    name: 'notify_events_duplicate_total',
    help: 'Events sent again (already stored, or repeated within a batch), by scope.',
    labelNames: ['scope'],
    registers,
  });
  const ingestStatementCalls = new Histogram({
    name: 'notify_ingest_statement_calls',
    help: 'Ingest calls (requests) whose events one store statement took together; 1 when every request pays its own.',
    buckets: STATEMENT_CALLS_BUCKETS,
    registers,
  });
  const matches = new Counter({
    name: 'notify_matches_total',
    help: 'Matches recorded (an event that a rule lets through), by scope and rule frequency.',
    labelNames: ['scope', 'frequency'],
    registers,
  });
  const matchesSilenced = new Counter({
    name: 'notify_matches_silenced_total',
    help: 'Matches a silence held back: recorded, never e-mailed.',
    registers,
  });
  const mailsSent = new Counter({
    name: 'notify_emails_sent_total',
    help: 'E-mails accepted by the SMTP server (or written to the outbox), by rule frequency.',
    labelNames: ['frequency'],
    registers,
  });
  const mailsFailed = new Counter({
    name: 'notify_emails_failed_total',
    help: 'E-mail attempts that failed: transient (retried unless final), permanent (recorded as failed), cancelled (member removed).',
    labelNames: ['reason', 'final'],
    registers,
  });
  const latency = new Histogram({
    name: 'notify_delivery_latency_seconds',
    help: "From the delivery's first event being accepted by ingest to the SMTP server accepting the e-mail, by rule frequency.",
    labelNames: ['frequency'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  // Every series operators alert on exists from the start at 0 for each known label value: without
  // it, a series appears only with its first increment, so `rate()` over it and absence alerts
  // (`absent(notify_emails_failed_total{reason="permanent"})`) say nothing until then.
  for (const scope of SCOPES) {
    eventsIngested.inc({ scope }, 0);
    eventsDuplicate.inc({ scope }, 0);
    for (const frequency of FREQUENCIES) matches.inc({ scope, frequency }, 0);
  }
  for (const frequency of FREQUENCIES) {
    mailsSent.inc({ frequency }, 0);
    latency.zero({ frequency });
  }
  for (const { reason, final } of MAIL_FAILURE_SERIES) mailsFailed.inc({ reason, final: String(final) }, 0);

  const httpRequests = new Counter({
    name: 'notify_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status_code'],
    registers,
  });
  const httpDuration = new Histogram({
    name: 'notify_http_request_duration_seconds',
    help: 'HTTP request durations, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const jobDuration = new Histogram({
    name: 'notify_job_duration_seconds',
    help: 'Time a worker spent on a job, by queue and outcome of the attempt.',
    labelNames: ['queue', 'status'],
    buckets: DURATION_BUCKETS,
    registers,
  });

  let queueSources: (() => readonly QueueCountsSource[]) | undefined;
  const queueUp = new Gauge({
    name: 'notify_queue_metrics_up',
    help: '1 when the last scrape could read every queue depth from Redis, 0 when it could not.',
    registers,
  });
  new Gauge({
    name: 'notify_queue_jobs',
    help: 'Jobs in each queue by state, read from Redis at scrape time.',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      this.reset();
      const queues = queueSources?.() ?? [];
      const results = await Promise.allSettled(queues.map((queue) => withTimeout(queue.getJobCounts(...QUEUE_STATES), countTimeoutMs)));
      let ok = true;
      results.forEach((result, index) => {
        const queue = queues[index]!;
        if (result.status === 'rejected') {
          ok = false;
          return;
        }
        for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, result.value[state] ?? 0);
      });
      queueUp.set(ok ? 1 : 0);
    },
  });

  const inProcess = new Map<string, () => number>();
  new Gauge({
    name: 'notify_in_process_work',
    help: 'Work this process took without a job and has not finished: events being matched (match), due periods being delivered (deliver), deliveries being sent (send).',
    labelNames: ['stage'],
    registers,
    collect() {
      this.reset();
      for (const [stage, pending] of inProcess) this.set({ stage }, pending());
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    pipeline: {
      eventsIngested(scope, accepted, duplicates) {
        if (accepted > 0) eventsIngested.inc({ scope }, accepted);
        if (duplicates > 0) eventsDuplicate.inc({ scope }, duplicates);
      },
      ingestStatement(calls) {
        ingestStatementCalls.observe(calls);
      },
      matched(scope, frequency, count) {
        if (count > 0) matches.inc({ scope, frequency }, count);
      },
      silenced(count) {
        if (count > 0) matchesSilenced.inc(count);
      },
      mailSent(frequency, latencyMs) {
        mailsSent.inc({ frequency });
        if (latencyMs !== null && Number.isFinite(latencyMs)) latency.observe({ frequency }, Math.max(0, latencyMs) / 1000);
      },
      mailFailed(reason, final) {
        mailsFailed.inc({ reason, final: String(final) });
      },
    },
    httpRequest({ method, route, status }, seconds) {
      const labels = { method, route, status_code: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    jobFinished(queue, status, seconds) {
      jobDuration.observe({ queue, status }, Math.max(0, seconds));
    },
    trackQueues(queues) {
      queueSources = queues;
    },
    trackInProcess(stage, pending) {
      inProcess.set(stage, pending);
    },
    render: () => registry.metrics(),
  };
}
