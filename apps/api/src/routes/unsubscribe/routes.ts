import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { readUnsubscribeToken } from '@notify/core';
import { findSubscription, setSubscribed, type Subscription } from '@notify/db';
import type { AppDeps } from '../../deps';
import { escapeHtml } from '../../html';

/**
 * One-click unsubscribe (RFC 8058) and its page, outside /v1 (every /v1 call needs a key): the
 * e-mails' List-Unsubscribe link. POST opts the member out of the rule at once (a mail client's
 * one-click sends `List-Unsubscribe=One-Click`; the page's buttons send `action`); GET only shows
 * the page, because mail scanners follow links. The token is the login: signed, naming the rule
 * and the member.
 */
const HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#111827;line-height:1.5}
button{font:inherit;padding:.5rem 1rem;border:1px solid #374151;border-radius:.375rem;background:#111827;color:#fff;cursor:pointer}
.muted{color:#4b5563}</style></head>
<body><main>${body}</main></body></html>`;
}

function subscriptionPage(subscription: Subscription, done?: 'unsubscribed' | 'resubscribed'): string {
  const rule = `<strong>${escapeHtml(subscription.ruleName)}</strong> of ${escapeHtml(subscription.organizationName)}`;
  const status = subscription.subscribed
    ? `<p>${escapeHtml(subscription.email)} receives the e-mails of the notification rule ${rule}.</p>
<form method="post"><input type="hidden" name="action" value="unsubscribe"><button type="submit">Unsubscribe</button></form>`
    : `<p>${escapeHtml(subscription.email)} no longer receives the e-mails of the notification rule ${rule}.</p>
<form method="post"><input type="hidden" name="action" value="resubscribe"><button type="submit">Resubscribe</button></form>`;
  const said = done === 'unsubscribed' ? '<p role="status">You are unsubscribed.</p>' : done === 'resubscribed' ? '<p role="status">You are subscribed again.</p>' : '';
  return page('Notification e-mails', `<h1>Notification e-mails</h1>${said}${status}
<p class="muted">Other rules of your organization are not affected.</p>`);
}

const NOT_FOUND = page('Link not valid', '<h1>This link is not valid</h1><p>It may be incomplete, or you are no longer a member of the rule it was for.</p>');

export const unsubscribeRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { secret } = deps.config.unsubscribe;
  const config = { auth: 'public' } as const;
  const schema = { hide: true, params: { type: 'object', properties: { token: { type: 'string', maxLength: 200 } } } };
  const send = (reply: FastifyReply, status: number, html: string) => reply.code(status).headers(HEADERS).type('text/html; charset=utf-8').send(html);

  // The page's form and the one-click POST are form-encoded; their bodies are tiny.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const subscriptionOf = async (token: string) => {
    const named = readUnsubscribeToken(secret, token);
    return named ? { named, subscription: await findSubscription(deps.db, named.ruleId, named.memberId) } : null;
  };

  app.get<{ Params: { token: string } }>('/unsubscribe/:token', { config, schema }, async (request, reply) => {
    const found = await subscriptionOf(request.params.token);
    if (!found?.subscription) return send(reply, 404, NOT_FOUND);
    return send(reply, 200, subscriptionPage(found.subscription));
  });

  app.post<{ Params: { token: string }; Body: unknown }>('/unsubscribe/:token', { config, schema }, async (request, reply) => {
    const found = await subscriptionOf(request.params.token);
    if (!found?.subscription) return send(reply, 404, NOT_FOUND);
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
    // Anything but the page's resubscribe button is an unsubscribe, RFC 8058's one-click first.
    const subscribe = body.action === 'resubscribe';
    await setSubscribed(deps.db, found.named.ruleId, found.named.memberId, subscribe);
    return send(reply, 200, subscriptionPage({ ...found.subscription, subscribed: subscribe }, subscribe ? 'resubscribed' : 'unsubscribed'));
  });
};
