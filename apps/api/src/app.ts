import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { findPrincipalByKey } from '@notify/db';
import type { AppDeps } from './deps';
import { addFiltersKeyword } from './plugins/ajv-filters';
import authPlugin from './plugins/auth';
import errorsPlugin from './plugins/errors';
import { KeyCache } from './plugins/key-cache';
import openapiPlugin from './plugins/openapi';
import requestIdPlugin, { REQUEST_ID_HEADER } from './plugins/request-id';
import { ApplicationErrorBody, GatewayErrorBody } from './schemas/common';
import { adminPipelineRoutes } from './routes/admin/pipeline';
import { adminRoutes } from './routes/admin/routes';
import { healthRoutes } from './routes/health';
import { ingestRoutes } from './routes/ingest/routes';
import { notificationRuleRoutes } from './routes/notification-rules/routes';

export interface BuiltApp {
  app: FastifyInstance;
  keyCache: KeyCache;
}

/** Builds the HTTP app without listening: tests inject(), server.ts listens. */
export async function buildApp(deps: AppDeps, options: { logger?: FastifyServerOptions['loggerInstance'] } = {}): Promise<BuiltApp> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: options.logger ?? deps.logger,
    genReqId: () => randomUUID(),
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: config.http.bodyLimitBytes,
    trustProxy: config.http.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
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
      plugins: [addFiltersKeyword],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // An empty JSON body reads as {}, so it meets the same "field is required" answers
  // as {}; NUL characters cannot be stored in PostgreSQL text, so they stop here.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    if (text.includes('\\u0000')) {
      const error = Object.assign(new SyntaxError('NUL characters (\\u0000) are not allowed.'), { statusCode: 400 });
      return done(error, undefined);
    }
    return parseJson(request, text, done);
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && ['POST', 'PUT', 'PATCH'].includes(request.method) && request.routeOptions.schema?.body) {
      request.body = {};
    }
  });

  const keyCache = new KeyCache((key) => findPrincipalByKey(deps.db, key), config.apiKeyCacheMs);
  const docsUrl = config.http.docsUrl ?? `${config.http.publicUrl ?? `http://localhost:${config.http.port}`}/docs`;

  app.addSchema(GatewayErrorBody);
  app.addSchema(ApplicationErrorBody);
  await app.register(requestIdPlugin);
  await app.register(errorsPlugin, { docsUrl });
  await app.register(authPlugin, { keyCache, redis: deps.redis, adminToken: config.adminToken, ingestTokens: config.ingestTokens });
  await app.register(openapiPlugin);
  await app.register(healthRoutes, { deps });
  await app.register(notificationRuleRoutes, { deps });
  await app.register(adminRoutes, { deps, keyCache });
  await app.register(adminPipelineRoutes, { deps });
  await app.register(ingestRoutes, { deps });
  app.log.debug({ header: REQUEST_ID_HEADER }, 'app built');
  return { app, keyCache };
}
