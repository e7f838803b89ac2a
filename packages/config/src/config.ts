import { createHmac, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

/** Splits a comma-separated variable into trimmed, non-empty items. */
const commaList = z
  .string()
  .optional()
  .transform((value) => (value ?? '').split(',').map((item) => item.trim()).filter(Boolean));

const optionalSecret = z
  .string()
  .optional()
  .transform((value) => (value && value.trim() !== '' ? value.trim() : undefined));

/** `host:port,host:port` (an IPv6 host in brackets: `[::1]:7000`). */
const hostPortList = commaList.pipe(
  z.array(
    z.string().transform((item, context) => {
      const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(item);
      const port = match ? Number(match[3]) : 0;
      if (!match || port < 1 || port > 65535) {
        context.addIssue({ code: 'custom', message: `"${item}" is not host:port` });
        return z.NEVER;
      }
      return { host: match[1] ?? match[2]!, port };
    }),
  ),
);

/** Operator, ingest and metrics tokens: guessing one must be hopeless (e.g. `openssl rand -hex 24`). */
export const MIN_TOKEN_LENGTH = 32;
const tooShort = `must be at least ${MIN_TOKEN_LENGTH} characters (e.g. the output of \`openssl rand -hex 24\`)`;
const optionalToken = optionalSecret.refine((value) => value === undefined || value.length >= MIN_TOKEN_LENGTH, tooShort);
const tokenList = commaList.refine((values) => values.every((value) => value.length >= MIN_TOKEN_LENGTH), `every token ${tooShort}`);

/** proxy-addr's names for address ranges, accepted in a TRUST_PROXY list. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(item: string): boolean {
  if (PROXY_RANGE_NAMES.has(item)) return true;
  const slash = item.indexOf('/');
  const address = slash === -1 ? item : item.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return false;
  if (slash === -1) return true;
  const bits = item.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}

/**
 * Which hops in front of the service may say who the client is (Fastify's `trustProxy`): `false`,
 * or the proxies' addresses and CIDR ranges; X-Forwarded-For is read only from them, right to left,
 * up to the first address that is not a trusted proxy. `true` would trust whatever a client writes in
 * X-Forwarded-For (and so let it pick its own address for every per-address limit), and a hop count
 * cannot tell a proxy from a client that reaches the service directly (Fastify 5 trusts nothing for
 * one): both are refused.
 */
const trustProxy = z
  .string()
  .default('false')
  .transform((value, context): false | string[] => {
    const text = value.trim();
    if (text === '' || text === 'false') return false;
    const items = text.split(',').map((item) => item.trim()).filter(Boolean);
    if (items.length > 0 && items.every(isAddressOrCidr)) return items;
    context.addIssue({
      code: 'custom',
      message:
        text === 'true' || /^\d+$/.test(text)
          ? `name the trusted proxies by address or CIDR (e.g. 10.0.0.0/8 or loopback); ${text === 'true' ? 'true would trust any X-Forwarded-For a client sends' : 'a hop count cannot tell a proxy from a client connecting directly'}`
          : 'expected false or comma-separated proxy addresses/CIDRs (or loopback, linklocal, uniquelocal)',
    });
    return z.NEVER;
  });

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

// One schema per concern; each reads only its own variables.
const httpSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DOCS_URL: z.url().optional(),
  PUBLIC_URL: z.url().optional(),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  /** A request (headers and body) must arrive within this long from its first byte, or the connection is cut with a 408. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** A connection that sends or receives nothing for this long is closed. */
  HTTP_CONNECTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  TRUST_PROXY: trustProxy,
});

const storesSchema = z.object({
  DATABASE_URL: z.string().min(1).default('postgresql://postgres@127.0.0.1:5432/postgres'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** PostgreSQL cancels any statement of the API's connections that runs longer (the workers' have no bound). */
  API_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  /** The PostgreSQL schema that holds the tables (PostgreSQL limits names to 63 bytes). */
  DATABASE_SCHEMA: z.string().min(1).max(63).default('public'),
  REDIS_URL: z.string().min(1).default('redis://127.0.0.1:6379'),
  /** Seed nodes of a Redis Cluster, `host:port,host:port`: when set, REDIS_URL is not used. */
  REDIS_CLUSTER_NODES: hostPortList,
  /** Sentinels watching one master, `host:port,...`, with REDIS_SENTINEL_MASTER naming it. */
  REDIS_SENTINELS: hostPortList,
  REDIS_SENTINEL_MASTER: z.string().min(1).optional(),
  /** Credentials of the cluster's nodes or of the sentinel-watched master (REDIS_URL carries its own). */
  REDIS_USERNAME: optionalSecret,
  REDIS_PASSWORD: optionalSecret,
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('notify'),
});

/** Signs unsubscribe links where neither UNSUBSCRIBE_SECRET nor ADMIN_TOKEN is set (development). */
const DEVELOPMENT_UNSUBSCRIBE_SECRET = 'notify development unsubscribe secret';

const authSchema = z.object({
  ADMIN_TOKEN: optionalToken,
  INGEST_TOKEN: tokenList,
  /** A bearer token that may read /metrics (besides ADMIN_TOKEN), so Prometheus need not hold the admin token. */
  METRICS_TOKEN: optionalToken,
  /** Signs the unsubscribe links of e-mails; every process of a deployment needs the same one. */
  UNSUBSCRIBE_SECRET: optionalToken,
  /** Failed authentications one client address may have per window before it is refused (429). */
  AUTH_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** Failed authentications all clients together may have per window before unknown keys are refused without a lookup. */
  AUTH_FAILURES_TOTAL: z.coerce.number().int().min(1).max(100_000_000).default(2000),
  AUTH_FAILURE_WINDOW_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /** How long a validated API key may be trusted without asking the database. */
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(1000).default(1000),
});

/** Why SMTP_URL cannot be used, or null. The URL holds a password, so no message repeats it. */
function smtpUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'expected smtp://[user:password@]host[:port] or smtps://… (percent-encode the credentials)';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return 'expected an smtp:// or smtps:// URL';
  const tls = url.searchParams.get('tls');
  if (tls !== null && tls !== 'required' && tls !== 'optional') return 'tls= must be required or optional';
  return null;
}

const mailSchema = z.object({
  /** `?tls=optional` lets credentials go over a connection without STARTTLS (a plain local relay); see packages/mail. */
  SMTP_URL: optionalSecret.superRefine((value, context) => {
    const problem = value === undefined ? null : smtpUrlProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  }),
  MAIL_FROM: z.string().min(3).default('alerts@localhost'),
  OUTBOX_DIR: z.string().min(1).default('outbox'),
  /** DKIM signing: the domain (d=), the selector (s=) and the private key (PEM), all three or none. */
  DKIM_DOMAIN: z.string().regex(/^[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+$/, 'a domain name').optional(),
  DKIM_SELECTOR: z.string().regex(/^[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*$/, 'a DNS label').optional(),
  DKIM_PRIVATE_KEY: optionalSecret,
  DKIM_PRIVATE_KEY_FILE: z.string().min(1).optional(),
});

export interface DkimSettings {
  domainName: string;
  keySelector: string;
  /** PEM. */
  privateKey: string;
}

/** The DKIM settings, or undefined when DKIM is off; problems go to `issues` (a key that does not parse among them). */
function dkimSettings(mail: z.infer<typeof mailSchema>, issues: string[]): DkimSettings | undefined {
  const given = [mail.DKIM_DOMAIN, mail.DKIM_SELECTOR, mail.DKIM_PRIVATE_KEY ?? mail.DKIM_PRIVATE_KEY_FILE].filter((value) => value !== undefined).length;
  if (given === 0) return undefined;
  if (given < 3) {
    issues.push('  DKIM_DOMAIN, DKIM_SELECTOR, DKIM_PRIVATE_KEY (or DKIM_PRIVATE_KEY_FILE): set all three to sign e-mails, or none');
    return undefined;
  }
  if (mail.DKIM_PRIVATE_KEY && mail.DKIM_PRIVATE_KEY_FILE) {
    issues.push('  DKIM_PRIVATE_KEY_FILE: set either it or DKIM_PRIVATE_KEY, not both');
    return undefined;
  }
  let privateKey: string;
  try {
    privateKey = mail.DKIM_PRIVATE_KEY ?? readFileSync(mail.DKIM_PRIVATE_KEY_FILE!, 'utf8');
    createPrivateKey(privateKey);
  } catch (error) {
    // Never the key itself: the message of a failed read names the file, of a failed parse only its kind.
    issues.push(`  ${mail.DKIM_PRIVATE_KEY ? 'DKIM_PRIVATE_KEY' : 'DKIM_PRIVATE_KEY_FILE'}: not a readable PEM private key (${(error as { code?: string }).code ?? 'unparsable'})`);
    return undefined;
  }
  return { domainName: mail.DKIM_DOMAIN!, keySelector: mail.DKIM_SELECTOR!, privateKey };
}

/**
 * INGEST_LINGER_MS when unset: long enough for single-event requests that come together to share
 * statements, which saves CPU an event, and short enough to add little to a request's time (the
 * trade measured: see commit cef6a8e).
 */
export const DEFAULT_INGEST_LINGER_MS = 30;

/**
 * What a process runs, named after the pipeline stages (packages/core/GLOSSARY.md): `api` (HTTP,
 * ingest included), `match` (the match queues and the rule index), `schedule` (the tick that asks
 * for due periods, and the reconciler), `deliver` (the deliver queue), `send` (the send queue).
 */
export const ROLES = ['api', 'match', 'schedule', 'deliver', 'send'] as const;
export type Role = (typeof ROLES)[number];

const roleName = z.string().transform((name, context) => {
  if ((ROLES as readonly string[]).includes(name)) return name as Role;
  context.addIssue({ code: 'custom', message: `unknown role "${name}": expected ${ROLES.join(', ')}` });
  return z.NEVER;
});

/**
 * The fast paths, where a process that runs two neighbouring stages hands work on itself rather
 * than through the queue between them (packages/pipeline/src/fast-paths.ts says each one's
 * trade-off). FAST_PATHS: `all` (the default), `none`, or a comma list of those to keep on.
 */
export const FAST_PATH_NAMES = ['matchInProcess', 'matchInStore', 'deliverInProcess', 'sendInProcess', 'claimWhenMade'] as const;
export type FastPathName = (typeof FAST_PATH_NAMES)[number];

const fastPathsSetting = z.string().default('all').transform((value, context) => {
  const names = value.split(',').map((name) => name.trim()).filter(Boolean);
  const on = names.length === 1 && names[0] === 'all' ? [...FAST_PATH_NAMES] : names.length === 1 && names[0] === 'none' ? [] : names;
  for (const name of on) {
    if (!(FAST_PATH_NAMES as readonly string[]).includes(name)) {
      context.addIssue({ code: 'custom', message: `unknown fast path "${name}": expected all, none, or some of ${FAST_PATH_NAMES.join(', ')}` });
      return z.NEVER;
    }
  }
  return Object.fromEntries(FAST_PATH_NAMES.map((name) => [name, on.includes(name)])) as Record<FastPathName, boolean>;
});

const pipelineSchema = z.object({
  FAST_PATHS: fastPathsSetting,
  ROLES: z
    .string()
    .default(ROLES.join(','))
    .transform((value) => value.split(',').map((role) => role.trim()).filter(Boolean))
    .pipe(z.array(roleName).min(1, 'name at least one role')),
  /** How long a small ingest request may wait for others to share its statement, while requests come together; 0: never. */
  INGEST_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(DEFAULT_INGEST_LINGER_MS),
  /** After an instant rule's first e-mail, matches within this window go out together at its end. */
  INSTANT_COALESCE_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  SCHEDULER_TICK_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** Work younger than this is taken to be in flight, not lost. */
  RECONCILE_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  RULE_RESYNC_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** History (events, matches, deliveries) older than this many days is dropped, a month at a time. */
  RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  MATCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  MAIL_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(20),
  SMTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100).default(5),
  /** Threads that render and encode e-mails off the event loop; 0 does it in the loop. */
  MAIL_COMPOSE_THREADS: z.coerce.number().int().min(0).max(16).default(1),
  MAIL_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(14),
  MAIL_BACKOFF_MS: z.coerce.number().int().min(10).max(3_600_000).default(5000),
  /** While the SMTP server is unreachable, mail pauses for 1 s, doubling up to this, without spending retries. */
  MAIL_OUTAGE_MAX_PAUSE_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** A job whose worker stops renewing its lock (a killed process) goes to another worker after this long. */
  JOB_LOCK_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
});

const lookupSchema = z.object({
  /** The WHOIS server a lookup starts at (host[:port]); it refers on to the registry and registrar. */
  WHOIS_SERVER: z
    .string()
    .default('whois.iana.org:43')
    .transform((value) => value.trim())
    .pipe(
      z
        .string()
        .regex(/^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::\d{1,5})?$/, 'expected host or host:port')
        .refine((value) => {
          const port = Number(/:(\d+)$/.exec(value)?.[1] ?? 43);
          return port >= 1 && port <= 65535;
        }, 'port must be 1 to 65535'),
    ),
  WHOIS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  WHOIS_CACHE_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(86_400),
  /** Whether referrals may lead into private address space (air-gapped mirrors); the configured server always may be there. */
  WHOIS_ALLOW_PRIVATE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

const cacheSchema = z.object({
  /** Bytes of rule-list pages an API process keeps (a quarter of it per organization); 0 turns the cache off. */
  RULE_LIST_CACHE_BYTES: z.coerce.number().int().min(0).max(2 ** 32).default(32 * 1024 * 1024),
});

const loggingSchema = z.object({
  LOG_LEVEL: logLevel.default('info'),
});

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface Config {
  http: {
    port: number;
    host: string;
    /** The `solution` link of error bodies; the service's own /docs when unset. */
    docsUrl: string | undefined;
    publicUrl: string | undefined;
    bodyLimitBytes: number;
    /** Fastify's `trustProxy`: false, or the proxies' addresses/CIDRs. */
    trustProxy: false | string[];
    requestTimeoutMs: number;
    connectionTimeoutMs: number;
  };
  databaseUrl: string;
  databasePoolSize: number;
  /** `statement_timeout` of the API's database connections. */
  apiStatementTimeoutMs: number;
  /** PostgreSQL schema of the tables; `public` unless DATABASE_SCHEMA says otherwise. */
  databaseSchema: string;
  /** Where Redis is: one node (REDIS_URL), a cluster (REDIS_CLUSTER_NODES) or a master watched by sentinels. */
  redis: RedisTarget;
  /** Redis key prefix of every queue. */
  queuePrefix: string;
  adminToken: string | undefined;
  ingestTokens: string[];
  /** Bearer token for /metrics besides the admin token. */
  metricsToken: string | undefined;
  /** Unsubscribe links: their signing secret and the address they start with (PUBLIC_URL/unsubscribe). */
  unsubscribe: { secret: string; baseUrl: string };
  apiKeyCacheMs: number;
  /** Budgets of failed authentication per client address and for all clients, per window. */
  authFailures: { perAddress: number; total: number; windowMs: number };
  mail: { smtpUrl: string | undefined; from: string; outboxDir: string; maxConnections: number; composeThreads: number; attempts: number; backoffMs: number; dkim: DkimSettings | undefined };
  roles: Role[];
  pipeline: {
    /** Which fast paths are on (FAST_PATHS). */
    fastPaths: Record<FastPathName, boolean>;
    ingestLingerMs: number;
    instantCoalesceMs: number;
    scheduleTickMs: number;
    reconcileIntervalMs: number;
    reconcileGraceMs: number;
    ruleResyncMs: number;
    retentionDays: number;
    matchConcurrency: number;
    sendConcurrency: number;
    sendOutageMaxPauseMs: number;
    jobLockMs: number;
  };
  logLevel: z.infer<typeof logLevel>;
  /** WHOIS lookups: where they start (host[:port]), their deadline, how long answers are cached (0: not at all), whether referrals may lead into private address space. */
  whois: { server: string; timeoutMs: number; cacheSeconds: number; allowPrivate: boolean };
  /** Bytes of serialized rule-list pages an API process caches, all organizations together. */
  ruleListCacheBytes: number;
}

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; username?: string; password?: string }
  | { kind: 'sentinel'; sentinels: HostPort[]; masterName: string; username?: string; password?: string };

function redisTarget(stores: z.infer<typeof storesSchema>, issues: string[]): RedisTarget {
  const credentials = { ...(stores.REDIS_USERNAME && { username: stores.REDIS_USERNAME }), ...(stores.REDIS_PASSWORD && { password: stores.REDIS_PASSWORD }) };
  if (stores.REDIS_CLUSTER_NODES.length) {
    if (stores.REDIS_SENTINELS.length) issues.push('  REDIS_SENTINELS: name either a cluster (REDIS_CLUSTER_NODES) or sentinels, not both');
    return { kind: 'cluster', nodes: stores.REDIS_CLUSTER_NODES, ...credentials };
  }
  if (stores.REDIS_SENTINELS.length) {
    if (!stores.REDIS_SENTINEL_MASTER) issues.push('  REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the name of the master they watch)');
    return { kind: 'sentinel', sentinels: stores.REDIS_SENTINELS, masterName: stores.REDIS_SENTINEL_MASTER ?? '', ...credentials };
  }
  return { kind: 'single', url: stores.REDIS_URL };
}

function parse<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  return result.data;
}

/** Reads the configuration once; bad values fail fast with every problem named. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const issues: string[] = [];
  const attempt = <T extends z.ZodType>(schema: T): z.infer<T> | undefined => {
    try {
      return parse(schema, env);
    } catch (error) {
      issues.push((error as Error).message.replace('Invalid configuration:\n', ''));
      return undefined;
    }
  };
  const http = attempt(httpSchema);
  const stores = attempt(storesSchema);
  const auth = attempt(authSchema);
  const mail = attempt(mailSchema);
  const logging = attempt(loggingSchema);
  const pipeline = attempt(pipelineSchema);
  const lookup = attempt(lookupSchema);
  const cache = attempt(cacheSchema);
  const redis = stores && redisTarget(stores, issues);
  const dkim = mail && dkimSettings(mail, issues);
  if (!http || !stores || !redis || !auth || !mail || !logging || !pipeline || !lookup || !cache || issues.length) {
    throw new ConfigError(`Invalid configuration:\n${issues.join('\n')}`);
  }
  return {
    http: {
      port: http.PORT,
      host: http.HOST,
      docsUrl: http.DOCS_URL,
      publicUrl: http.PUBLIC_URL,
      bodyLimitBytes: http.BODY_LIMIT_BYTES,
      trustProxy: http.TRUST_PROXY,
      requestTimeoutMs: http.HTTP_REQUEST_TIMEOUT_MS,
      connectionTimeoutMs: http.HTTP_CONNECTION_TIMEOUT_MS,
    },
    databaseUrl: stores.DATABASE_URL,
    databasePoolSize: stores.DATABASE_POOL_SIZE,
    apiStatementTimeoutMs: stores.API_STATEMENT_TIMEOUT_MS,
    databaseSchema: stores.DATABASE_SCHEMA,
    redis,
    queuePrefix: stores.QUEUE_PREFIX,
    adminToken: auth.ADMIN_TOKEN,
    ingestTokens: auth.INGEST_TOKEN,
    metricsToken: auth.METRICS_TOKEN,
    unsubscribe: {
      // Without its own secret, one derived from ADMIN_TOKEN (the same in every process of a
      // deployment); without either, a fixed development secret (links anyone could forge: the
      // configuration doc says to set one).
      secret: auth.UNSUBSCRIBE_SECRET
        ?? createHmac('sha256', auth.ADMIN_TOKEN ?? DEVELOPMENT_UNSUBSCRIBE_SECRET).update('notify unsubscribe links').digest('hex'),
      baseUrl: `${(http.PUBLIC_URL ?? `http://localhost:${http.PORT}`).replace(/\/+$/, '')}/unsubscribe`,
    },
    apiKeyCacheMs: auth.API_KEY_CACHE_MS,
    authFailures: { perAddress: auth.AUTH_FAILURES_PER_ADDRESS, total: auth.AUTH_FAILURES_TOTAL, windowMs: auth.AUTH_FAILURE_WINDOW_MS },
    mail: {
      smtpUrl: mail.SMTP_URL,
      from: mail.MAIL_FROM,
      outboxDir: mail.OUTBOX_DIR,
      dkim,
      maxConnections: pipeline.SMTP_MAX_CONNECTIONS,
      composeThreads: pipeline.MAIL_COMPOSE_THREADS,
      attempts: pipeline.MAIL_ATTEMPTS,
      backoffMs: pipeline.MAIL_BACKOFF_MS,
    },
    roles: [...new Set(pipeline.ROLES)],
    pipeline: {
      fastPaths: pipeline.FAST_PATHS,
      ingestLingerMs: pipeline.INGEST_LINGER_MS,
      instantCoalesceMs: pipeline.INSTANT_COALESCE_MS,
      scheduleTickMs: pipeline.SCHEDULER_TICK_MS,
      reconcileIntervalMs: pipeline.RECONCILE_INTERVAL_MS,
      reconcileGraceMs: pipeline.RECONCILE_GRACE_MS,
      ruleResyncMs: pipeline.RULE_RESYNC_MS,
      retentionDays: pipeline.RETENTION_DAYS,
      matchConcurrency: pipeline.MATCH_CONCURRENCY,
      sendConcurrency: pipeline.MAIL_CONCURRENCY,
      sendOutageMaxPauseMs: pipeline.MAIL_OUTAGE_MAX_PAUSE_MS,
      jobLockMs: pipeline.JOB_LOCK_MS,
    },
    logLevel: logging.LOG_LEVEL,
    whois: { server: lookup.WHOIS_SERVER, timeoutMs: lookup.WHOIS_TIMEOUT_MS, cacheSeconds: lookup.WHOIS_CACHE_SECONDS, allowPrivate: lookup.WHOIS_ALLOW_PRIVATE },
    ruleListCacheBytes: cache.RULE_LIST_CACHE_BYTES,
  };
}
