import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ping } from '@notify/db';
import type { AppDeps } from '../deps';
import { GatewayError } from '../errors/catalog';
import { checkCheapCredential, type AuthThrottle } from '../plugins/auth-throttle';
import { bearerToken, secretChecker } from '../plugins/bearer';

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('fail')]),
  error: Type.Optional(Type.String({ description: 'Why the check failed: only to a caller with the operator token (and in the logs).' })),
});
const Readiness = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('fail')]), checks: Type.Record(Type.String(), Check) });

async function timed(check: () => Promise<unknown>, timeoutMs: number): Promise<{ status: 'ok' | 'fail'; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'ok' };
  } catch (error) {
    return { status: 'fail', error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps; throttle: AuthThrottle }> = async (app, { deps, throttle }) => {
  const config = { auth: 'public' } as const;
  const tags = ['Health'];

  app.get('/health/live', {
    config, schema: { tags, summary: 'The process is running', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  // A failed check's error names hosts, ports and login failures: operators read it (with the
  // operator token, and in the logs), anyone else the check's name and status only.
  const lastErrors = new Map<string, string>();
  const isAdminToken = secretChecker([deps.config.adminToken]);
  // A wrong token is a failed authentication like any other: it spends the address's budget.
  const isOperator = async (request: FastifyRequest): Promise<boolean> => {
    const token = bearerToken(request);
    if (token === undefined) return false;
    await checkCheapCredential(
      throttle,
      request,
      token,
      () => isAdminToken(token),
      () => new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="admin"' }),
    );
    return true;
  };

  app.get('/health/ready', {
    config,
    schema: {
      tags,
      summary: 'The database, Redis, the worker roles of this process and their mail server are ready',
      description: 'Each check\'s name and status; with `Authorization: Bearer <ADMIN_TOKEN>`, a failed check\'s error too.',
      response: { 200: Readiness, 503: Readiness },
    },
  }, async (request, reply) => {
    const operator = await isOperator(request);
    // The roles' own checks (the send role's SMTP server or outbox folder) cache their answer for a while.
    const roleChecks = Object.entries(deps.roles?.checks ?? {});
    const [database, redis, ...roleResults] = await Promise.all([
      timed(() => ping(deps.db), 2000),
      timed(() => deps.redis.ping(), 2000),
      ...roleChecks.map(([, check]) => timed(check, 2000)),
    ]);
    const checks: Record<string, { status: 'ok' | 'fail'; error?: string }> = { database: database!, redis: redis! };
    if (deps.roles && deps.roles.names.length) {
      checks.roles = deps.roles.isReady() ? { status: 'ok' } : { status: 'fail', error: `not every role is running (${deps.roles.names.join(', ')})` };
    }
    roleChecks.forEach(([name], index) => {
      checks[name] = roleResults[index]!;
    });
    // Logged when a check starts failing, fails differently or passes again, not on every probe.
    for (const [name, check] of Object.entries(checks)) {
      const last = lastErrors.get(name);
      if (check.status === 'fail' && check.error !== last) {
        lastErrors.set(name, check.error ?? '');
        request.log.warn({ check: name, error: check.error }, 'readiness check failed');
      } else if (check.status === 'ok' && last !== undefined) {
        lastErrors.delete(name);
        request.log.info({ check: name }, 'readiness check passes again');
      }
    }
    const ok = Object.values(checks).every((check) => check.status === 'ok');
    const answer = operator ? checks : Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, { status: check.status }]));
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'fail', checks: answer });
  });
};
