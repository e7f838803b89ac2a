import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Conflict, LimitReached, NotFound, schemaErrorsToIssues, ValidationFailed, type FieldIssue, type SchemaError } from '@notify/core';
import { isDatabaseUnavailable, isStatementTimeout } from '@notify/db';
import { ApplicationError, applicationErrors, GatewayError, gatewayErrors, type ApplicationErrorName } from '../errors/catalog';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required body fields reported only once the other required fields are present. */
    deferRequired?: readonly string[];
  }
}

export interface ErrorPluginOptions {
  docsUrl: string;
}

export function sendGateway(reply: FastifyReply, request: FastifyRequest, error: GatewayError): FastifyReply {
  reply.headers(error.headers);
  return reply
    .code(error.statusCode)
    .type('application/json; charset=utf-8')
    .send({ message: gatewayErrors[error.kind].message, request_id: request.id });
}

/** The body of an application error of the catalog; `details` replaces the entry's. */
export function applicationBody(name: ApplicationErrorName, docsUrl: string, details?: string | null, parameters: FieldIssue[] = []) {
  const entry = applicationErrors[name];
  return { code: entry.code, details: details === undefined ? entry.details : details, parameters, solution: docsUrl };
}

const FASTIFY_CODES: Record<string, ApplicationErrorName> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payloadTooLarge',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupportedMediaType',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'badRequest',
};

/** A status's catalog entry, for client errors thrown with a bare status (400 finds `validation`: badRequest's code; the error's message is the details). */
const APPLICATION_ERROR_BY_STATUS = new Map<number, ApplicationErrorName>();
for (const [name, entry] of Object.entries(applicationErrors) as [ApplicationErrorName, (typeof applicationErrors)[ApplicationErrorName]][]) {
  if (!APPLICATION_ERROR_BY_STATUS.has(entry.status)) APPLICATION_ERROR_BY_STATUS.set(entry.status, name);
}

/** ioredis giving up on a command: Redis is away (the connection closed, or retries ran out). */
function isRedisUnavailable(error: FastifyError): boolean {
  return error.name === 'MaxRetriesPerRequestError' || /Connection is closed|Stream isn't writeable|connect ECONNREFUSED/.test(String(error.message));
}

/** One place that turns any thrown error into the bodies of product decisions §1. */
async function errorsPlugin(app: FastifyInstance, options: ErrorPluginOptions): Promise<void> {
  const { docsUrl } = options;
  const send = (reply: FastifyReply, name: ApplicationErrorName, details?: string | null, parameters?: FieldIssue[]) =>
    reply.code(applicationErrors[name].status).type('application/json; charset=utf-8').send(applicationBody(name, docsUrl, details, parameters));

  const handle = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error instanceof GatewayError) return sendGateway(reply, request, error);
    if (error.validation) {
      const deferred = request.routeOptions.config?.deferRequired ?? [];
      const issues = schemaErrorsToIssues(error.validation as unknown as SchemaError[], { deferred: error.validationContext === 'body' ? deferred : [] });
      return send(reply, 'validation', null, issues);
    }
    if (error instanceof ValidationFailed) return send(reply, 'validation', null, error.parameters);
    if (error instanceof NotFound) return send(reply, 'notFound', error.details);
    if (error instanceof Conflict) return send(reply, 'conflict', error.details);
    if (error instanceof LimitReached) return send(reply, 'limitReached', error.details);
    if (error instanceof ApplicationError) return send(reply.headers(error.headers), error.kind, error.details);
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return send(reply, 'validation', null, [{ param: 'body', details: [`JSON parse error - ${error.message}`] }]);
    }
    const known = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (known) return send(reply, known);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.info({ err: error }, 'client error');
      // A client error the catalog has no entry for is a bad request: no code outside the catalog.
      return send(reply, APPLICATION_ERROR_BY_STATUS.get(status) ?? 'badRequest', error.message);
    }
    if (isStatementTimeout(error)) {
      // API_STATEMENT_TIMEOUT_MS stopped it: the request asked for too much, the service is fine.
      request.log.warn({ err: error }, 'statement timeout');
      return send(reply, 'statementTimeout');
    }
    // Never a stack trace or SQL in a body: the details stay in the log, under this request's id.
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, isDatabaseUnavailable(error) || isRedisUnavailable(error) ? 'unavailable' : 'internal');
  };
  app.setErrorHandler((error: FastifyError, request, reply) => {
    try {
      return handle(error, request, reply);
    } catch (failure) {
      // Describing the error failed (an input too strange to describe): still a §1 body, never Fastify's own.
      request.log.error({ err: failure }, 'error handler failed');
      return send(reply, 'internal');
    }
  });

  app.setNotFoundHandler((request, reply) => sendGateway(reply, request, new GatewayError('noRoute')));
}

export default fp(errorsPlugin, { name: 'errors' });
