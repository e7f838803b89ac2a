import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { isWellFormedApiKey } from '@notify/core';
import type { KeyPrincipal, PlanGroup } from '@notify/db';
import { GatewayError } from '../errors/catalog';
import { checkCheapCredential, throttled, type AuthThrottle } from './auth-throttle';
import type { KeyCache } from './key-cache';
import { LeasedRateLimitCounters, leasedStore } from './leased-rate-limit-store';
import { redisKeys, type RedisClient } from '@notify/queues';
import { bearerToken, secretChecker } from './bearer';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route: customers' API keys, operators, scanners, or anyone. */
    auth?: 'apikey' | 'admin' | 'ingest' | 'public';
    /** The plan group an API key's organization needs (product decisions §2). */
    group?: PlanGroup;
    /** Whether a call counts against the key's monthly quota. */
    quota?: boolean;
  }
  interface FastifyRequest {
    principal: KeyPrincipal | null;
  }
}

export interface AuthPluginOptions {
  keyCache: KeyCache;
  redis: RedisClient;
  /** Redis key prefix of the counters. */
  prefix: string;
  /** 0: one Redis call per request; otherwise counters settle with Redis this often. */
  adminToken: string | undefined;
  ingestTokens: string[];
  /** Counts failed authentication per client address and in total (plugins/auth-throttle.ts). */
  throttle: AuthThrottle;
}

const KEY_CHALLENGE = { 'www-authenticate': 'Key' };
const MONTH_MS = 32 * 24 * 3600 * 1000;

function monthOf(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

async function authPlugin(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  app.decorateRequest('principal', null);

  // Limits hold across every instance: each leases tokens of a key's window from Redis and spends
  // them locally (leased-rate-limit-store.ts); quota keys lease one token at a time, so a quota is
  // exact. A Redis outage lets requests through on local counting rather than failing the API.
  const counters = new LeasedRateLimitCounters({ redis: options.redis, prefix: redisKeys(options.prefix).rateLimit, exact: (key) => key.includes(':q:') });
  await app.register(rateLimit, { global: false, store: leasedStore(counters) as never, skipOnError: true });
  const principalOf = (request: FastifyRequest) => request.principal as KeyPrincipal;
  const perSecond = app.createRateLimit({
    keyGenerator: (request) => `${principalOf(request).keyId}:s`,
    max: async (request) => principalOf(request).plan.rateLimitPerSecond,
    timeWindow: 1000,
  });
  const perMinute = app.createRateLimit({
    keyGenerator: (request) => `${principalOf(request).keyId}:m`,
    max: async (request) => principalOf(request).plan.rateLimitPerMinute,
    timeWindow: 60_000,
  });
  const perMonth = app.createRateLimit({
    keyGenerator: (request) => `${principalOf(request).keyId}:q:${monthOf(new Date())}`,
    max: async (request) => principalOf(request).plan.monthlyQuota,
    timeWindow: MONTH_MS,
  });

  const { throttle } = options;
  const badKey = () => new GatewayError('unauthorized', KEY_CHALLENGE);

  async function authenticateKey(request: FastifyRequest): Promise<KeyPrincipal> {
    const raw = request.headers.apikey;
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (key === undefined || key.trim() === '') throw new GatewayError('missingApiKey', KEY_CHALLENGE);
    const presented = key.trim();
    const blocked = throttle.refusal(request.ip);
    if (blocked) throw throttled(blocked);
    if (!isWellFormedApiKey(presented)) {
      const verdict = await throttle.failed(request.ip);
      throw verdict.allowed ? badKey() : throttled(verdict);
    }
    // What this instance checked within API_KEY_CACHE_MS costs the database nothing: judged at once.
    const known = options.keyCache.cached(presented);
    if (known) return known;
    if (known === null) {
      const verdict = await throttle.failed(request.ip);
      throw verdict.allowed ? badKey() : throttled(verdict);
    }
    // A lookup costs a query: the attempt is counted before it, and given back if the key is right.
    // In a flood (the fleet over its budget) only keys this instance has seen valid are looked up.
    const familiar = options.keyCache.wasValid(presented);
    if (familiar) {
      // A key this instance has seen valid is nearly always still valid: no counting round trips on
      // the way (its cache entry expires every API_KEY_CACHE_MS); only a lookup that fails counts.
      const principal = await options.keyCache.resolve(presented);
      if (principal) return principal;
      const verdict = await throttle.failed(request.ip);
      throw verdict.allowed ? badKey() : throttled(verdict);
    }
    const flooded = throttle.totalRefusal();
    if (flooded) throw throttled(flooded);
    const verdict = await throttle.reserve(request.ip);
    if (!verdict.allowed) throw throttled(verdict);
    let principal: KeyPrincipal | null;
    try {
      principal = await options.keyCache.resolve(presented);
    } catch (error) {
      // The database failed, not the client: the try is given back (the answer is a 503).
      throttle.succeeded(request.ip);
      throw error;
    }
    if (!principal) throw badKey();
    throttle.succeeded(request.ip);
    return principal;
  }

  type Window = Extract<Awaited<ReturnType<typeof perSecond>>, { isAllowed: false }>;
  // No allow-list is configured, so every answer is a counted window.
  const counted = (result: Awaited<ReturnType<typeof perSecond>>): Window | undefined => (result.isAllowed ? undefined : result);

  async function limit(request: FastifyRequest, reply: FastifyReply, quota: boolean): Promise<void> {
    const [second, minute] = await Promise.all([perSecond(request).then(counted), perMinute(request).then(counted)]);
    const { plan } = principalOf(request);
    reply.header('ratelimit-policy', `${plan.rateLimitPerSecond};w=1, ${plan.rateLimitPerMinute};w=60`);
    // The window closest to its limit is the one the client needs to know about.
    const windows = [second, minute].filter((window): window is Window => window !== undefined && window.ttl > 0);
    const tighter = windows.sort((a, b) => a.remaining / a.max - b.remaining / b.max)[0];
    if (tighter) {
      reply.header('ratelimit-limit', tighter.max);
      reply.header('ratelimit-remaining', tighter.remaining);
      reply.header('ratelimit-reset', tighter.ttlInSeconds);
    }
    for (const window of windows) {
      if (window.isExceeded) {
        const retryAfter = Math.max(1, window.ttlInSeconds);
        throw new GatewayError('rateLimited', { 'retry-after': retryAfter, 'ratelimit-limit': window.max, 'ratelimit-remaining': 0, 'ratelimit-reset': retryAfter });
      }
    }
    // Only a request the rate limits let through spends quota (a 429 served nothing).
    const month = quota ? counted(await perMonth(request)) : undefined;
    if (month && month.ttl > 0) {
      reply.header('x-ratelimit-limit-month', month.max);
      reply.header('x-ratelimit-remaining-month', month.remaining);
      if (month.isExceeded) throw new GatewayError('quotaExceeded', { 'retry-after': Math.max(1, month.ttlInSeconds) });
    }
  }

  const isAdminToken = secretChecker([options.adminToken]);
  const isIngestToken = secretChecker(options.ingestTokens);
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    switch (config?.auth) {
      case 'apikey': {
        const principal = await authenticateKey(request);
        if (config.group && !principal.plan.groups.includes(config.group)) throw new GatewayError('planForbidden');
        request.principal = principal;
        await limit(request, reply, config.quota === true);
        return;
      }
      case 'admin': {
        // The operator console: a valid session cookie plus its CSRF header (plugins/admin-session.ts).
        if (request.adminSession) return;
        const token = bearerToken(request);
        await checkCheapCredential(
          throttle,
          request,
          token,
          () => isAdminToken(token),
          () => new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="admin"' }),
        );
        return;
      }
      case 'ingest': {
        const token = bearerToken(request);
        await checkCheapCredential(
          throttle,
          request,
          token,
          () => isIngestToken(token),
          () => new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="ingest"' }),
        );
        return;
      }
      case 'public':
        return;
      default:
        // Deny by default: an API route that forgot to say who may call it is closed, not open.
        if (/^\/(v1|admin)(\/|$)/.test(request.routeOptions.url ?? '')) throw new GatewayError('noRoute');
        return;
    }
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['errors'] });
