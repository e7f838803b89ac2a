import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { INGEST_LIMITS, parseIngestRequest } from '@notify/core';
import type { AppDeps } from '../../deps';
import { applicationRef, gatewayRef } from '../../schemas/common';
import { IngestAccepted, IngestBody, IngestEvent } from './schemas';

/**
 * A full batch of 1,000 events easily exceeds the server-wide 1 MiB; larger bodies are a 413
 * (split the batch). Authentication runs before the body is read, so only scanners get this far.
 */
export const INGEST_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

const DESCRIPTION = `Events from scanners (product decisions §5). Authenticated with \`Authorization: Bearer <INGEST_TOKEN>\`.

The body is one event, or \`{"events": [...]}\` with 1 to ${INGEST_LIMITS.maxEvents} events, at most ${INGEST_BODY_LIMIT_BYTES / 1024 / 1024} MiB.
It is all or nothing: when any event is invalid or names an unknown organization, the answer is a 400 that names
each problem (\`events[3].scope\` in a batch, \`scope\` for a single event; at most ${INGEST_LIMITS.maxIssues} are listed)
and nothing is stored.

A 202 means every event is durably stored. An event is identified by \`organization_id\` and \`id\`: sending it
again is harmless and counts in \`duplicates\` (as do repeats within one batch, where the first one counts).

Limits: \`id\` 1–${INGEST_LIMITS.idMaxLength} characters, \`asset\` 1–${INGEST_LIMITS.assetMaxLength}, \`asset_type\` up to ${INGEST_LIMITS.assetTypeMaxLength},
\`title\` 1–${INGEST_LIMITS.titleMaxLength}, \`summary\` up to ${INGEST_LIMITS.summaryMaxLength}, \`url\` up to ${INGEST_LIMITS.urlMaxLength} (absolute http or https),
\`tags\` up to ${INGEST_LIMITS.maxTags} of 1–${INGEST_LIMITS.tagMaxLength} characters, \`data\` a JSON object of at most ${INGEST_LIMITS.dataMaxBytes} bytes
and ${INGEST_LIMITS.dataMaxDepth} levels. Text is trimmed (except \`id\`); single-line fields may not contain control characters
(C0, DEL, C1) or the line separators U+2028 and U+2029; \`summary\` may hold tabs and line breaks but no other control character.`;

export const ingestRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  // JSON only: a wrong content type is a 415, not a string body (parsers are encapsulated to this plugin).
  app.removeContentTypeParser('text/plain');
  app.addSchema(IngestEvent);
  // One stage for every request: the requests of a moment share a statement and match hand-offs.
  const ingest = deps.pipeline.ingest;

  app.post('/v1/ingest/events', {
    config: { auth: 'ingest' },
    bodyLimit: INGEST_BODY_LIMIT_BYTES,
    // parseIngestRequest validates with this same schema (core's EventEnvelope) in one pass over
    // the batch, naming each problem by its index (`events[3].scope`), as the publisher needs too.
    validatorCompiler: () => () => true,
    schema: {
      tags: ['Ingest'],
      security: [{ ingest: [] }],
      summary: 'Ingest events',
      description: DESCRIPTION,
      body: IngestBody,
      response: { 202: IngestAccepted, 400: applicationRef, 401: gatewayRef, 413: applicationRef, 415: applicationRef },
    },
  }, async (request, reply) => {
    const { shape, events } = parseIngestRequest(request.body);
    const result = await ingest.ingest(events, { shape });
    return reply.code(202).send(result);
  });
};
