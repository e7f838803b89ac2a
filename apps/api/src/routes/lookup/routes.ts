import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationFailed } from '@notify/core';
import type { AppDeps } from '../../deps';
import { ApplicationError } from '../../errors/catalog';
import { apiKeyErrorResponses, applicationRef } from '../../schemas/common';
import { parseWhoisServer, WhoisClient, WhoisError } from '../../whois/client';
import { normalizeDomain } from '../../whois/domain';
import { WhoisService } from '../../whois/service';
import { WhoisAnswer, WhoisQuery } from './schemas';

const DESCRIPTION = `Looks a domain up over WHOIS (RFC 3912): the lookup starts at the configured server (IANA by
default), follows its referral to the registry of the domain's TLD and the registry's referral to the
registrar. Answers are cached (24 hours by default), so \`check_date\` can be earlier than the call.
Every call counts against the API key's monthly quota, answered from the cache or not; a spent quota is a 429
\`API quota exceeded\`. A WHOIS server that cannot be reached answers 502 (code 10502), one that does not
answer in time 504 (code 10504); when only the registrar fails, the registry's answer is returned.`;

export const lookupRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { whois } = deps.config;
  const server = parseWhoisServer(whois.server);
  if (!server) throw new Error(`WHOIS_SERVER is not host[:port]: ${whois.server}`);
  const service = new WhoisService({
    client: new WhoisClient({ server, timeoutMs: whois.timeoutMs, allowPrivate: whois.allowPrivate }),
    redis: deps.redis,
    prefix: deps.config.queuePrefix,
    cacheSeconds: whois.cacheSeconds,
    logger: deps.logger,
  });

  app.get('/v1/lookup/whois', {
    config: { auth: 'apikey', group: 'lookup', quota: true },
    schema: {
      tags: ['Lookup'],
      security: [{ apikey: [] }],
      summary: 'WHOIS lookup of a domain',
      description: DESCRIPTION,
      querystring: WhoisQuery,
      response: { 200: WhoisAnswer, 502: applicationRef, 504: applicationRef, ...apiKeyErrorResponses },
    },
  }, async (request) => {
    const checked = normalizeDomain(request.query.domain);
    if (!checked.ok) throw new ValidationFailed([{ param: 'domain', details: [checked.message] }]);
    try {
      return await service.lookup(checked.domain);
    } catch (error) {
      if (!(error instanceof WhoisError)) throw error;
      request.log.warn({ err: error, domain: checked.domain, whois_server: error.server }, 'WHOIS lookup failed');
      throw new ApplicationError(
        error.kind === 'timeout' ? 'upstreamTimeout' : 'upstreamUnavailable',
        // The server stays in the log: the configured one may be an internal host.
        error.kind === 'timeout' ? 'The WHOIS server did not answer in time.' : 'The WHOIS server could not be reached.',
      );
    }
  });
};
