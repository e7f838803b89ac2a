import type { RedisClient } from '@notify/queues';
import type { Logger } from '@notify/observability';
import type { WhoisClient } from './client';
import { mergeWhoisRecords, parseWhois, type WhoisRecord } from './parse';
import { redisKeys } from '@notify/queues';

/** The answer of GET /v1/lookup/whois. */
export interface WhoisResult {
  domain_name: string;
  /** The answers about the domain, registry first, then registrar, as the servers sent them. */
  raw: string;
  /** Null when no answer holds a record of the domain it could read (e.g. the name is not registered). */
  parsed: WhoisRecord | null;
  /** When the WHOIS servers were asked (an answer from the cache keeps its date). */
  check_date: string;
}

export interface WhoisServiceOptions {
  client: Pick<WhoisClient, 'lookup'>;
  redis: RedisClient;
  /** Redis key prefix (QUEUE_PREFIX). */
  prefix: string;
  /** 0 turns the cache off. */
  cacheSeconds: number;
  logger?: Pick<Logger, 'warn'>;
}

/** Redis that does not answer within this is skipped: the lookup goes to the WHOIS servers. */
const CACHE_TIMEOUT_MS = 250;

function withinCacheTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`redis did not answer within ${CACHE_TIMEOUT_MS} ms`)), CACHE_TIMEOUT_MS);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/** WHOIS lookups with their answers cached in Redis by domain, for every API instance. */
export class WhoisService {
  constructor(private readonly options: WhoisServiceOptions) {}

  cacheKey(domain: string): string {
    return redisKeys(this.options.prefix).whois(domain);
  }

  /** `domain` is normalized already (normalizeDomain): lower case, ASCII, registrable. */
  async lookup(domain: string): Promise<WhoisResult> {
    const { redis, cacheSeconds, logger } = this.options;
    const key = this.cacheKey(domain);
    if (cacheSeconds > 0) {
      try {
        const cached = await withinCacheTimeout(redis.get(key));
        if (cached) return JSON.parse(cached) as WhoisResult;
      } catch (error) {
        logger?.warn({ err: error }, 'could not read the WHOIS cache');
      }
    }
    const lookup = await this.options.client.lookup(domain);
    const result: WhoisResult = {
      domain_name: domain,
      raw: lookup.answers.map((answer) => answer.text).join('\n'),
      parsed: mergeWhoisRecords(lookup.answers.map((answer) => parseWhois(answer.text, domain))),
      check_date: new Date().toISOString(),
    };
    // An answer without the registrar's part is not kept: the next call tries the registrar again.
    if (cacheSeconds > 0 && lookup.complete) {
      await withinCacheTimeout(redis.set(key, JSON.stringify(result), 'EX', cacheSeconds)).catch((error: unknown) =>
        logger?.warn({ err: error }, 'could not write the WHOIS cache'),
      );
    }
    return result;
  }
}
