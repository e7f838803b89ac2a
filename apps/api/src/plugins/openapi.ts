import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { describeErrorCatalog } from '../errors/catalog';
import { FiltersShape } from '../schemas/filters';
import { AssetFiltersShape } from '../schemas/asset-filters';
import { ASSET_FILTERS_KEYWORD } from './ajv-filters';

/** The condition-language fields validate through `x-filters`; the document shows their shape. */
function showFilterShapes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(showFilterShapes);
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node).map(([key, value]) => [key, showFilterShapes(value)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if ('x-filters' in object) {
    const { 'x-filters': _root, ...rest } = object;
    return { ...(JSON.parse(JSON.stringify(FiltersShape)) as object), ...rest, type: ['object', 'null'] };
  }
  if (ASSET_FILTERS_KEYWORD in object) {
    const { [ASSET_FILTERS_KEYWORD]: _root, ...rest } = object;
    return { ...(JSON.parse(JSON.stringify(AssetFiltersShape)) as object), ...rest, type: ['object', 'null'] };
  }
  return object;
}

const DESCRIPTION = `Notification rules for the security-intelligence platform.

Every call carries an API key in the \`apikey\` header (never in the URL). Every response carries a
\`service-request-id\` header (a UUID) that names the request in our logs.

### Errors

${describeErrorCatalog()}

Validation errors (400) list one entry per offending input in \`parameters\`. When a create body lacks
\`name\` or \`scope\`, only the missing fields among those are reported; \`members\` is reported once they are
present (likewise \`enabled\` after \`name\` and \`members\` on update), as the reference API does.

### Condition language

A rule's \`strategy\` uses the platform's filter language: \`must\` (all hold), \`should\` (at least one holds,
when not empty), \`must_not\` (none holds); each condition is \`{name, type, value}\` with operators
\`eq\`, \`in\`, \`startswith\`, \`endswith\`, \`wildcard\` (\`*\`, \`?\`), \`contains_any\`, \`contains_all\`, \`exists\`,
\`gte\`, \`lte\` over \`asset\`, \`asset_type\`, \`severity\` (info < low < medium < high < critical), \`tags\` and
\`data.<key>\`. String comparisons ignore case.

### Schedules

Delivery times are read in the organization's IANA time zone. \`delivery_day_of_week\`: 0 = Monday … 6 = Sunday.
Defaults: frequency \`instant\`, enabled \`true\`, strategy \`null\`, \`delivery_hour\` 9 for daily, weekly and
monthly, \`delivery_day_of_week\` 0 for weekly; instant and hourly rules store both as null.

### Limits

page 1–800 (default 1), page_size 25–100 (default 100), name 1–255 characters, members 1–500,
strategy clauses up to 50 conditions (conditions do not nest: a strategy is at most 150 flat conditions),
a list value up to 100 items, text values up to 1,024 characters; each is a 400 naming its path. A strategy
also keeps to a cost budget (each condition: the passes its operator makes over its field's largest text, a
wildcard one more per \`*\`; 200,000 in all), a 400 on \`strategy\` beyond it. An organization holds at most
its plan's \`max_rules\` rules (default 1,000): one more is a 403 with code 10403. A request
body over 1 MiB (by default; 16 MiB for ingest) is a 413. Dates (list filters, event times) are ISO 8601 with years 1 to 9999;
text may not contain NUL characters. Unknown body fields are ignored. Rate limits and the monthly quota depend on the organization's plan
and are reported in \`RateLimit-*\` headers; a 429 carries \`Retry-After\`.`;

async function openapiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Notification Rules API', version: '1.0.0', description: DESCRIPTION },
      components: {
        securitySchemes: {
          apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
          ingest: { type: 'http', scheme: 'bearer', description: 'INGEST_TOKEN' },
        },
      },
    },
    transformObject: (documentObject) => showFilterShapes((documentObject as { openapiObject: unknown }).openapiObject) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapiPlugin, { name: 'openapi' });
