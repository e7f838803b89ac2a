import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '@notify/observability';
import { GatewayError } from '../errors/catalog';
import { checkCheapCredential, type AuthThrottle } from './auth-throttle';
import { bearerToken, secretChecker } from './bearer';

export interface MetricsPluginOptions {
  metrics: Metrics;
  /** Bearer tokens that may read /metrics (the admin token and METRICS_TOKEN); none set: every scrape is refused. */
  tokens: ReadonlyArray<string | undefined>;
  /** Wrong tokens count as failed authentication of their address (plugins/auth-throttle.ts). */
  throttle: AuthThrottle;
}

/** The label of requests no route matched: raw URLs would make a label per scanner probe. */
export const UNMATCHED_ROUTE = 'not_found';

/**
 * Counts and times every HTTP answer by method, route pattern and status, and serves the
 * Prometheus text at `GET /metrics` to a bearer of the admin token or METRICS_TOKEN.
 */
async function metricsPlugin(app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  const { metrics } = options;
  const isMetricsToken = secretChecker(options.tokens);

  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequest(
      { method: request.method, route: request.routeOptions?.url ?? UNMATCHED_ROUTE, status: reply.statusCode },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', {
    // Checked here rather than by the auth plugin: two tokens may read it.
    config: { auth: 'public' },
    schema: { hide: true },
    onRequest: async (request) => {
      const token = bearerToken(request);
      await checkCheapCredential(
        options.throttle,
        request,
        token,
        () => isMetricsToken(token),
        () => new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="metrics"' }),
      );
    },
  }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()));
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['errors'] });
