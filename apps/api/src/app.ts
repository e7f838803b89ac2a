import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { findPrincipalByKey } from '@notify/db';
import type { AppDeps } from './deps';
import { addAssetFiltersKeyword, addFiltersKeyword, addSilenceFiltersKeyword } from './plugins/ajv-filters';
import { addStrictUuidFormat } from './plugins/ajv-uuid-format';
import adminSessionPlugin from './plugins/admin-session';
import { AuthThrottle } from './plugins/auth-throttle';
import authPlugin from './plugins/auth';
import errorsPlugin, { applicationBody } from './plugins/errors';
import { KeyCache } from './plugins/key-cache';
import metricsPlugin from './plugins/metrics';
import openapiPlugin from './plugins/openapi';
import requestIdPlugin, { REQUEST_ID_HEADER } from './plugins/request-id';
import { serializeRequest } from './request-serializer';
import { ApplicationErrorBody, GatewayErrorBody } from './schemas/common';
import { applicationErrors } from './errors/catalog';
import { adminConsoleRoutes } from './routes/admin/console';
import { adminOrganizationRuleRoutes } from './routes/admin/organization-rules';
import { adminPipelineRoutes } from './routes/admin/pipeline';
import { adminRoutes } from './routes/admin/routes';
import { assetSearchRoutes } from './routes/easm/routes';
import { healthRoutes } from './routes/health';
import { ingestRoutes } from './routes/ingest/routes';
import { lookupRoutes } from './routes/lookup/routes';
import { notificationRuleRoutes } from './routes/notification-rules/routes';
import { notificationSilenceRoutes } from './routes/notification-silences/routes';
import { ruleDeliveryRoutes } from './routes/notification-rules/deliveries';
import { ruleTestSendRoutes } from './routes/notification-rules/test-send';
import { rulePreviewRoutes } from './routes/notification-rules/preview';
import { unsubscribeRoutes } from './routes/unsubscribe/routes';

function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (depth > 64 || typeof value !== 'object' || value === null) return false;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\0') || containsNul(item, depth + 1)) return true;
  }
  return false;
}

export interface BuiltApp {
  app: FastifyInstance;
  keyCache: KeyCache;
}

/** Builds the HTTP app without listening: tests inject(), server.ts listens. */
export async function buildApp(deps: AppDeps, options: { logger?: FastifyServerOptions['loggerInstance'] } = {}): Promise<BuiltApp> {
  const { config } = deps;
  const docsUrl = config.http.docsUrl ?? `${config.http.publicUrl ?? `http://localhost:${config.http.port}`}/docs`;
  const app = Fastify({
    loggerInstance: (options.logger ?? deps.logger).child({}, { serializers: { req: serializeRequest } }),
    genReqId: () => randomUUID(),
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: config.http.bodyLimitBytes,
    // A client sending its request a byte at a time (slow loris) holds a socket until this cuts it (408).
    requestTimeout: config.http.requestTimeoutMs,
    connectionTimeout: config.http.connectionTimeoutMs,
    http: {
      // Node checks request deadlines on this timer (30 s by default, longer than a short deadline).
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.http.requestTimeoutMs / 10))),
      // The headers' own deadline (Node: 60 s) may not outlast the whole request's.
      headersTimeout: Math.min(60_000, config.http.requestTimeoutMs),
    },
    trustProxy: config.http.trustProxy,
    // Ids are opaque: a long one is routed (and then not found) rather than refused by the router.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // A URL that cannot even be decoded names no resource: the same 404 as any unknown id.
    frameworkErrors: (error, request, reply) => {
      const [name, details] = error.code === 'FST_ERR_BAD_URL' ? (['notFound', undefined] as const) : (['badRequest', error.message] as const);
      void (reply as unknown as FastifyReply)
        .header(REQUEST_ID_HEADER, request.id)
        .code(applicationErrors[name].status)
        .type('application/json; charset=utf-8')
        .send(applicationBody(name, docsUrl, details) as never);
    },
    // What Node's HTTP parser refuses (a URL or headers over 16 KiB, malformed HTTP, a client too slow)
    // never reaches a route; it still gets a body of decisions §1 and a service-request-id rather than
    // Fastify's own (found by test/faults/abuse-secrets.test.ts). The error's raw packet holds the
    // request's headers, keys included: only its code is logged.
    clientErrorHandler: (error, socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const name = error.code === 'HPE_HEADER_OVERFLOW' ? 'headersTooLarge' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'requestTimeout' : 'badRequest';
      const entry = applicationErrors[name];
      const requestId = randomUUID();
      const body = JSON.stringify(applicationBody(name, docsUrl));
      deps.logger.debug({ request_id: requestId, code: error.code, status: entry.status }, 'client error');
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${entry.status} ${STATUS_CODES[entry.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n${REQUEST_ID_HEADER}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy(error);
    },
    ajv: {
      customOptions: {
        allErrors: true,
        // Bodies are taken as sent: "5" is not an integer and "true" not a boolean.
        coerceTypes: false,
        useDefaults: false,
        removeAdditional: false,
        allowUnionTypes: true,
        verbose: true,
        strict: false,
      },
      plugins: [addFiltersKeyword, addAssetFiltersKeyword, addSilenceFiltersKeyword],
      // After ajv-formats (which the compiler adds after `plugins`), so the strict `uuid` wins.
      onCreate: addStrictUuidFormat,
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are JSON only (decisions §1): without the built-in text parser any other
  // content type is a 415 rather than a string that fails validation.
  app.removeContentTypeParser('text/plain');
  // An empty JSON body reads as {}, so it meets the same "field is required" answers
  // as {}; NUL characters cannot be stored in PostgreSQL text, so they stop here.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    parseJson(request, text, (error, value) => {
      if (error) return done(error, undefined);
      // Only a body that spells an escaped NUL needs the deeper look.
      if (text.includes('u0000') && containsNul(value)) {
        return done(Object.assign(new SyntaxError('NUL characters (\\u0000) are not allowed.'), { statusCode: 400 }), undefined);
      }
      return done(null, value);
    });
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method) && request.routeOptions.schema?.body) {
      request.body = {};
    }
  });

  const keyCache = new KeyCache((key) => findPrincipalByKey(deps.db, key), config.apiKeyCacheMs);
  const throttle = new AuthThrottle({ redis: deps.redis, prefix: config.queuePrefix, ...config.authFailures });

  app.addSchema(GatewayErrorBody);
  app.addSchema(ApplicationErrorBody);
  await app.register(requestIdPlugin);
  await app.register(errorsPlugin, { docsUrl });
  await app.register(metricsPlugin, { metrics: deps.metrics, tokens: [config.adminToken, config.metricsToken], throttle });
  // Before auth: the operator console's session counts as admin on /admin/v1 (see the plugin).
  await app.register(adminSessionPlugin, {
    adminToken: config.adminToken,
    redis: deps.redis,
    prefix: config.queuePrefix,
    logger: deps.logger,
    secure: config.http.publicUrl !== undefined && new URL(config.http.publicUrl).protocol === 'https:',
  });
  await app.register(authPlugin, {
    keyCache,
    redis: deps.redis,
    prefix: config.queuePrefix,
    adminToken: config.adminToken,
    ingestTokens: config.ingestTokens,
    throttle,
  });
  await app.register(openapiPlugin, { throttle });
  await app.register(healthRoutes, { deps, throttle });
  await app.register(notificationRuleRoutes, { deps });
  await app.register(notificationSilenceRoutes, { deps });
  await app.register(ruleDeliveryRoutes, { deps });
  await app.register(ruleTestSendRoutes, { deps });
  await app.register(rulePreviewRoutes, { deps });
  await app.register(unsubscribeRoutes, { deps });
  await app.register(assetSearchRoutes, { deps });
  await app.register(lookupRoutes, { deps });
  await app.register(adminRoutes, { deps, keyCache });
  await app.register(adminPipelineRoutes, { deps });
  await app.register(adminOrganizationRuleRoutes, { deps });
  await app.register(adminConsoleRoutes, { deps, throttle });
  await app.register(ingestRoutes, { deps });
  app.log.debug({ header: REQUEST_ID_HEADER }, 'app built');
  return { app, keyCache };
}
