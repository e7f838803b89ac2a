import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { describeErrorCatalog, GatewayError } from '../errors/catalog';
import { FiltersShape } from '../schemas/filters';
import { AssetFiltersShape } from '../schemas/asset-filters';
import { ASSET_FILTERS_KEYWORD, SILENCE_FILTERS_KEYWORD } from './ajv-filters';
import { checkCheapCredential, type AuthThrottle } from './auth-throttle';
import { bearerToken } from './bearer';

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
  if (SILENCE_FILTERS_KEYWORD in object) {
    const { [SILENCE_FILTERS_KEYWORD]: _root, ...rest } = object;
    return { ...(JSON.parse(JSON.stringify(FiltersShape)) as object), ...rest, type: 'object' };
  }
  if (ASSET_FILTERS_KEYWORD in object) {
    const { [ASSET_FILTERS_KEYWORD]: _root, ...rest } = object;
    return { ...(JSON.parse(JSON.stringify(AssetFiltersShape)) as object), ...rest, type: ['object', 'null'] };
  }
  return object;
}

const DESCRIPTION = `Notification rules for the security-intelligence platform.

Every call carries an API key in the \`apikey\` header (never in the URL), except ingest
(\`POST /v1/ingest/events\`), which the platform's scanners call with a bearer token (\`INGEST_TOKEN\`).
Every response carries a \`service-request-id\` header (a UUID) that names the request in our logs.

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
and are reported in \`RateLimit-*\` headers; a 429 carries \`Retry-After\`.
Failed authentication (a wrong, unknown or malformed key) counts against the client's address: past its
budget (20 a minute by default) every call from it is a 429 \`Too many failed authentication attempts\`
with \`Retry-After\`, whatever key it presents, until the window ends. A request whose database work runs
past its time bound (5 s by default) is stopped and answers 503; a request that takes longer than 30 s to
arrive is cut with a 408.`;

const ADMIN_DESCRIPTION = `The operator API of the notification service: organizations, their members and
API keys, and the delivery pipeline (flush a rule's digest, list deliveries, retry a failed e-mail).
Customers never see it; their API is documented at \`/openapi.json\` (page \`/docs\`).

Every call carries \`Authorization: Bearer <ADMIN_TOKEN>\`. The operator console (\`/admin/console\`) calls
the same routes with its session cookie and the header \`x-requested-with: notify-console\`. Every
response carries a \`service-request-id\` header (a UUID) that names the request in our logs.

### Errors

${describeErrorCatalog()}`;

interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  components?: { securitySchemes?: Record<string, unknown>; schemas?: Record<string, unknown> };
  paths?: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
  [key: string]: unknown;
}

export type OpenApiAudience = 'public' | 'admin';

/**
 * Which document a path belongs to: the operator API to the operators' one; the health probes
 * (for the orchestrator) and /metrics (for Prometheus) to none; everything else — notification
 * rules, asset search, lookup, and ingest, which the scanners integrate with like customers do
 * with the rest — to the public one.
 */
export function audienceOf(path: string): OpenApiAudience | null {
  if (path === '/admin' || path.startsWith('/admin/')) return 'admin';
  if (path.startsWith('/health/') || path === '/metrics') return null;
  return 'public';
}

/** One audience's document out of the whole: its paths, and only the schemas and security schemes they use. */
export function documentFor(whole: OpenApiDocument, audience: OpenApiAudience, info: Record<string, unknown>): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(whole.paths ?? {}).filter(([path]) => audienceOf(path) === audience));
  const schemes = new Set<string>();
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) for (const requirement of operation.security ?? []) for (const name of Object.keys(requirement)) schemes.add(name);
  }
  const allSchemas = whole.components?.schemas ?? {};
  const used = new Set<string>();
  const PREFIX = '#/components/schemas/';
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(PREFIX)) {
        const name = value.slice(PREFIX.length);
        if (!used.has(name) && name in allSchemas) {
          used.add(name);
          visit(allSchemas[name]);
        }
      } else {
        visit(value);
      }
    }
  };
  visit(paths);
  const pick = (from: Record<string, unknown>, names: Set<string>) => Object.fromEntries(Object.entries(from).filter(([name]) => names.has(name)));
  return {
    openapi: whole.openapi,
    info,
    components: { securitySchemes: pick(whole.components?.securitySchemes ?? {}, schemes), schemas: pick(allSchemas, used) },
    paths,
  };
}

async function openapiPlugin(app: FastifyInstance, options: { throttle: AuthThrottle }): Promise<void> {
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
  // Made once, on the first request (every route is known by then); app.swagger() caches the whole.
  let documents: Record<OpenApiAudience, OpenApiDocument> | undefined;
  const documentOf = (audience: OpenApiAudience): OpenApiDocument => {
    if (!documents) {
      const whole = app.swagger() as unknown as OpenApiDocument;
      documents = {
        public: documentFor(whole, 'public', whole.info),
        admin: documentFor(whole, 'admin', { title: 'Notification service: operator API', version: '1.0.0', description: ADMIN_DESCRIPTION }),
      };
    }
    return documents[audience];
  };
  const uiConfig = { docExpansion: 'list', deepLinking: true } as const;

  // Two swagger-ui instances, each in a context of its own (the plugin decorates its context once).
  await app.register(async (docs) => {
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig, transformSpecificationClone: false, transformSpecification: () => documentOf('public') });
    docs.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => documentOf('public'));
  });

  // The operator document and its page: the admin token as a bearer, or a console session (a
  // browser's: the page fetches the document with the cookie alone, and reading it changes nothing).
  await app.register(async (operators) => {
    const sessions = app.adminSessions;
    // The auth plugin closes any /admin route that says nothing: these say public and are guarded here.
    operators.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), auth: 'public' } as typeof route.config;
    });
    operators.addHook('onRequest', async (request, reply) => {
      const token = bearerToken(request);
      if (token !== undefined) {
        // A wrong operator token spends the address's failure budget, as on every other admin route.
        await checkCheapCredential(options.throttle, request, token, () => sessions.checkToken(token), () =>
          new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="admin"' }));
        return;
      }
      if ((await sessions.read(request)) !== null) return;
      const path = request.url.split('?')[0]!;
      const page = request.method === 'GET' && path.startsWith('/admin/docs') && !/\/(json|yaml)$/.test(path);
      if (page && token === undefined) return reply.redirect(`/admin/login?next=${encodeURIComponent(request.url)}`);
      throw new GatewayError('unauthorized', { 'www-authenticate': 'Bearer realm="admin"' });
    });
    await operators.register(swaggerUi, {
      routePrefix: '/admin/docs',
      uiConfig,
      transformSpecificationClone: false,
      transformSpecification: () => documentOf('admin'),
    });
    operators.get('/admin/openapi.json', { schema: { hide: true } }, async () => documentOf('admin'));
  });
}

export default fp(openapiPlugin, { name: 'openapi' });
