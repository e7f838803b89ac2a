import { createHmac, randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RedisClient } from '@notify/queues';
import type { Logger } from '@notify/observability';
import { redisKeys } from '@notify/queues';
import { secretChecker } from './bearer';

/**
 * Operator browser sessions: the queue dashboard and the console under `/admin`.
 *
 * Logging in with ADMIN_TOKEN gives a signed cookie (HttpOnly, SameSite=Strict, Path=/admin)
 * whose value is a random session id and an expiry. The signing secret is derived from
 * ADMIN_TOKEN, so every instance accepts every instance's sessions and changing the token
 * ends them all. Logging out revokes the id in Redis until it would have expired anyway.
 *
 * On `/admin/v1/*` (the operator API) a session counts only together with the console's
 * header `x-requested-with: notify-console`: a page of another site can neither send the
 * SameSite cookie nor add that header without a CORS preflight this service never answers.
 * Bearer calls are unaffected.
 */

export const SESSION_COOKIE = 'notify_admin_session';
export const CSRF_HEADER = 'x-requested-with';
export const CSRF_VALUE = 'notify-console';
export const SESSION_TTL_MS = 8 * 3600 * 1000;
export const SESSION_PATH = '/admin';

export interface AdminSession {
  id: string;
  expiresAt: number;
}

export interface AdminSessions {
  /** False without ADMIN_TOKEN: then nobody can log in. */
  readonly enabled: boolean;
  /** Compares a presented token with ADMIN_TOKEN in constant time. */
  checkToken(presented: string): boolean;
  /** Starts a session: sets the cookie on the reply. */
  open(request: FastifyRequest, reply: FastifyReply): AdminSession;
  /** The request's valid session, or null (no cookie, bad signature, expired, revoked). */
  read(request: FastifyRequest): Promise<AdminSession | null>;
  /** Ends the request's session (revokes it) and clears the cookie. */
  close(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    adminSessions: AdminSessions;
  }
  interface FastifyRequest {
    /** A valid console session together with the console's CSRF header, on `/admin/v1/*`: counts as admin. */
    adminSession: boolean;
  }
}

export interface AdminSessionOptions {
  adminToken: string | undefined;
  redis: RedisClient;
  /** Redis key prefix (QUEUE_PREFIX): revoked sessions are kept under it. */
  prefix: string;
  logger: Logger;
  ttlMs?: number;
  /** Mark the cookie `Secure` on every request: PUBLIC_URL is https, so TLS may end at a proxy before us. */
  secure?: boolean;
}


async function adminSessionPlugin(app: FastifyInstance, options: AdminSessionOptions): Promise<void> {
  const { adminToken, redis, logger } = options;
  const keys = redisKeys(options.prefix);
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  // Without a token no session can be opened; the random secret only keeps the signer well-formed.
  const secret = adminToken ? createHmac('sha256', adminToken).update('notify admin console session v1').digest() : randomBytes(32);
  // No parsing hook: only /admin requests ever look at cookies.
  await app.register(cookie, { secret, hook: false });

  const cookieOptions = (request: FastifyRequest) => ({
    path: SESSION_PATH,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: options.secure === true || request.protocol === 'https',
  });

  const sessions: AdminSessions = {
    enabled: Boolean(adminToken),
    checkToken: secretChecker([adminToken]),
    open(request, reply) {
      const session = { id: randomBytes(18).toString('base64url'), expiresAt: Date.now() + ttlMs };
      reply.setCookie(SESSION_COOKIE, `${session.id}.${session.expiresAt}`, { ...cookieOptions(request), signed: true, maxAge: Math.floor(ttlMs / 1000) });
      return session;
    },
    async read(request) {
      if (!adminToken) return null;
      const header = request.headers.cookie;
      if (!header) return null;
      const raw = app.parseCookie(header)[SESSION_COOKIE];
      if (!raw) return null;
      const unsigned = app.unsignCookie(raw);
      if (!unsigned.valid || unsigned.value === null) return null;
      const match = /^([A-Za-z0-9_-]{24})\.(\d{13})$/.exec(unsigned.value);
      if (!match) return null;
      const session = { id: match[1]!, expiresAt: Number(match[2]) };
      if (session.expiresAt <= Date.now()) return null;
      try {
        if (await redis.exists(keys.adminSessionRevoked(session.id))) return null;
      } catch (error) {
        // The signature and expiry still hold; only a logout's revocation cannot be seen now.
        logger.warn({ err: error }, 'could not check admin session revocation');
      }
      return session;
    },
    async close(request, reply) {
      const session = await sessions.read(request);
      if (session) {
        const remaining = Math.max(1, session.expiresAt - Date.now());
        await redis.set(keys.adminSessionRevoked(session.id), '1', 'PX', remaining).catch((error) => logger.warn({ err: error }, 'could not revoke admin session'));
      }
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    },
  };

  app.decorate('adminSessions', sessions);
  app.decorateRequest('adminSession', false);
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/admin/v1/') || request.headers[CSRF_HEADER] !== CSRF_VALUE) return;
    request.adminSession = (await sessions.read(request)) !== null;
  });
}

/** Register before the auth plugin: its `admin` check reads `request.adminSession`. */
export default fp(adminSessionPlugin, { name: 'admin-session' });
