import { ConfigError, type Config } from '@notify/config';
import type { DatabaseHandle } from '@notify/db';
import { compileTemplates, composeInLoop, composeInThreads, createMailTransport, rendererFor, senderAddress, type MailTransport } from '@notify/mail';
import type { Logger, Metrics } from '@notify/observability';
import { assemblePipeline, emailDestination, type Destination, type Pipeline, type StageRole } from '@notify/pipeline';
import type { Queues } from '@notify/queues';
import { ingestSettings } from '@notify/api';

/** The domain of MAIL_FROM's address; a MAIL_FROM that is not one address stops the start (it would fail every e-mail). */
function messageIdDomain(from: string): string {
  let address: string;
  try {
    address = senderAddress(from);
  } catch {
    throw new ConfigError(`MAIL_FROM must be one address, with a display name or not (e.g. "Security Alerts <alerts@example.com>"), not ${JSON.stringify(from.slice(0, 200))}`);
  }
  return address.slice(address.lastIndexOf('@') + 1);
}

/** The e-mail destination of the send stage: SMTP or the outbox folder (config decides, unless a test hands in a transport). */
async function mailDestination(config: Config, logger: Logger, transport?: MailTransport): Promise<Destination> {
  // Checked before any connection is made.
  const domain = messageIdDomain(config.mail.from);
  const mail = transport ?? createMailTransport({ smtpUrl: config.mail.smtpUrl, outboxDir: config.mail.outboxDir, maxConnections: config.mail.maxConnections, dkim: config.mail.dkim });
  const templates = await compileTemplates();
  const threads = config.mail.composeThreads;
  const composer = threads > 0
    ? composeInThreads(templates, { threads, onThreadError: (error) => logger.warn({ err: error }, 'compose thread stopped: starting another') })
    : composeInLoop(rendererFor(templates));
  return emailDestination({ composer, transport: mail, from: config.mail.from, messageIdDomain: domain, unsubscribe: config.unsubscribe });
}

export interface ComposeOptions {
  /** The workers' pool (statements unbounded in time). */
  db: DatabaseHandle;
  /** The API's pool, which ingest uses (statements bounded by API_STATEMENT_TIMEOUT_MS). */
  ingestDb: DatabaseHandle;
  queues: Queues;
  logger: Logger;
  metrics: Metrics;
  now: () => Date;
  /** Tests and benchmarks may hand in a transport; otherwise config decides (SMTP or outbox). */
  transport?: MailTransport;
}

/**
 * The composition root's one assembly of the pipeline: the stages of the roles config names, each
 * with its resources, joined by the fast paths FAST_PATHS leaves on.
 */
export async function composePipeline(config: Config, options: ComposeOptions): Promise<Pipeline> {
  const { db, queues, logger, metrics, now } = options;
  const roles = config.roles.filter((role): role is StageRole => role !== 'api');
  const send = roles.includes('send')
    ? {
        destination: await mailDestination(config, logger, options.transport),
        concurrency: config.pipeline.sendConcurrency,
        claimTimeoutMs: config.pipeline.jobLockMs,
        outageMaxPauseMs: config.pipeline.sendOutageMaxPauseMs,
      }
    : undefined;
  return assemblePipeline({
    resources: { db, queues, now, metrics: metrics.pipeline },
    ingestResources: { db: options.ingestDb, metrics: metrics.pipeline },
    roles,
    fastPaths: config.pipeline.fastPaths,
    log: logger,
    match: { instantCoalesceMs: config.pipeline.instantCoalesceMs, transactions: config.pipeline.matchConcurrency },
    ingest: ingestSettings(config, logger),
    send,
  });
}
