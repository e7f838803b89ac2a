import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps';
import { GatewayError } from '../../errors/catalog';
import { sendGateway } from '../../plugins/errors';
import type { AuthThrottle } from '../../plugins/auth-throttle';
import { queuesDashboard, QUEUES_PATH } from './queues-dashboard';
import { escapeHtml } from '../../html';

/**
 * The operator's browser side of `/admin`: a login with ADMIN_TOKEN, the queue dashboard
 * (bull-board) and the console, a static page whose script calls the operator API
 * (`/admin/v1/*`) with the session cookie and the CSRF header (plugins/admin-session.ts).
 * Every page but the login and its stylesheet needs a session: a browser without one is
 * sent to the login, anything else gets a 401.
 */

const CONSOLE_PATH = '/admin/console';
const LOGIN_PATH = '/admin/login';
const asset = (name: string) => readFileSync(new URL(`./console-assets/${name}`, import.meta.url), 'utf8');
const CONSOLE_HTML = asset('console.html');
const CONSOLE_JS = asset('console.js');
const CONSOLE_CSS = asset('console.css');

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Where to go after logging in: only a path of this service under /admin (no open redirect). */
export function safeNext(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.startsWith('/admin') || raw.startsWith('//') || /[\\\s]/.test(raw)) return CONSOLE_PATH;
  const url = new URL(raw, 'http://service.invalid');
  if (url.origin !== 'http://service.invalid' || !/^\/admin(\/|$)/.test(url.pathname) || url.pathname.startsWith(LOGIN_PATH)) return CONSOLE_PATH;
  return url.pathname + url.search;
}

/**
 * A state-changing request made with the cookie must come from a page of this service. Browsers
 * say where a request comes from (Sec-Fetch-Site, Origin); SameSite=Strict already keeps the
 * cookie off cross-site requests, this is the second lock.
 */
export function fromSameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (typeof origin === 'string') {
    try {
      return new URL(origin).host === request.host;
    } catch {
      return false;
    }
  }
  return true;
}

function loginPage(options: { next: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>Operator login · Notify</title>
<link rel="stylesheet" href="/admin/assets/console.css">
</head>
<body class="login">
<main>
<h1>Notify operators</h1>
<form method="post" action="${LOGIN_PATH}">
${error}
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="next" value="${escapeHtml(options.next)}">
<button type="submit">Log in</button>
</form>
<p class="hint">The token is the service's <code>ADMIN_TOKEN</code>. A session lasts 8 hours.</p>
</main>
</body>
</html>
`;
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

export const adminConsoleRoutes: FastifyPluginAsync<{ deps: AppDeps; throttle: AuthThrottle }> = async (app, { deps, throttle }) => {
  const sessions = app.adminSessions;
  const config = { auth: 'public' } as const;
  const schema = { hide: true };

  // The login form is the only body these pages take.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    // bull-board's hashed assets keep the caching @fastify/static gives them; pages and data are never stored.
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!reply.hasHeader(name)) reply.header(name, value);
    return payload;
  });

  app.get('/admin', { config, schema }, async (_request, reply) => reply.redirect(CONSOLE_PATH));

  app.get(LOGIN_PATH, { config, schema }, async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (await sessions.read(request)) return reply.redirect(next);
    return html(reply, 200, loginPage({ next }));
  });

  app.post(LOGIN_PATH, { config, schema }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next);
    if (!fromSameOrigin(request)) return html(reply, 403, loginPage({ next, error: 'This form must be sent from this service’s own login page.' }));
    if (!sessions.enabled) return html(reply, 503, loginPage({ next, error: 'Operator login is off: ADMIN_TOKEN is not set.' }));
    // The try is counted before the token is compared (and given back if it is right), in one Redis
    // call: parallel tries cannot slip past the budget (plugins/auth-throttle.ts).
    const verdict = throttle.refusal(request.ip) ?? (await throttle.reserve(request.ip));
    if (!verdict.allowed) {
      reply.header('retry-after', verdict.retryAfterSeconds);
      return html(reply, 429, loginPage({ next, error: 'Too many failed attempts from this address. Try again later.' }));
    }
    if (typeof body.token !== 'string' || !sessions.checkToken(body.token)) {
      request.log.warn('failed admin login');
      return html(reply, 401, loginPage({ next, error: 'That token is not right.' }));
    }
    throttle.succeeded(request.ip);
    sessions.open(request, reply);
    request.log.info('admin logged in');
    return reply.redirect(next, 303);
  });

  app.post('/admin/logout', { config, schema }, async (request, reply) => {
    if (!fromSameOrigin(request)) return sendGateway(reply, request, new GatewayError('foreignOrigin'));
    await sessions.close(request, reply);
    return reply.redirect(LOGIN_PATH, 303);
  });

  app.get('/admin/assets/console.css', { config, schema }, async (_request, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS));

  // Everything below needs a session.
  await app.register(async (secured) => {
    // bull-board's routes say nothing about auth: they are "public" to the auth plugin and
    // guarded here instead (the auth plugin closes any /admin route that says nothing).
    secured.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), auth: 'public' } as typeof route.config;
    });
    secured.addHook('onRequest', async (request, reply) => {
      if (await sessions.read(request)) {
        if (!SAFE_METHODS.has(request.method) && !fromSameOrigin(request)) {
          return sendGateway(reply, request, new GatewayError('foreignOrigin'));
        }
        return;
      }
      const api = request.url.startsWith(`${QUEUES_PATH}/api/`);
      if ((request.method === 'GET' || request.method === 'HEAD') && !api) {
        return reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(request.url)}`);
      }
      return sendGateway(reply, request, new GatewayError('unauthorized'));
    });

    secured.get(CONSOLE_PATH, { config, schema }, async (_request, reply) => html(reply, 200, CONSOLE_HTML));
    secured.get(`${CONSOLE_PATH}/console.js`, { config, schema }, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS));
    await secured.register(queuesDashboard, { deps });
  });
};
