/**
 * Every error the HTTP API answers with, defined once (product decisions §1).
 * Gateway errors have the `{message, request_id}` body of the API gateway the
 * platform runs behind; application errors the `{code, details, parameters, solution}` body.
 */
export const gatewayErrors = {
  missingApiKey: { status: 401, message: 'No API key found in request' },
  /** A credential that is wrong or missing where no API key is asked for: API key, operator or ingest token, console session. */
  unauthorized: { status: 401, message: 'Unauthorized' },
  planForbidden: { status: 403, message: 'You cannot consume this service' },
  /** A state change the operator console's session cookie carried from a page of another site. */
  foreignOrigin: { status: 403, message: 'Forbidden' },
  noRoute: { status: 404, message: 'no Route matched with those values' },
  rateLimited: { status: 429, message: 'API rate limit exceeded' },
  quotaExceeded: { status: 429, message: 'API quota exceeded' },
  authThrottled: { status: 429, message: 'Too many failed authentication attempts' },
} as const;

export const applicationErrors = {
  validation: { status: 400, code: 10400, details: null },
  badRequest: { status: 400, code: 10400, details: 'The request could not be understood.' },
  limitReached: { status: 403, code: 10403, details: "A limit of the organization's plan is reached (e.g. plan.max_rules: creating one more notification rule)." },
  notFound: { status: 404, code: 10404, details: 'Not found.' },
  conflict: { status: 409, code: 10409, details: 'The request conflicts with the current state.' },
  tooManyTestSends: { status: 429, code: 10429, details: 'At most 5 test sends per notification rule per minute. Try again after the Retry-After seconds.' },
  requestTimeout: { status: 408, code: 10408, details: 'The request did not arrive in time.' },
  payloadTooLarge: { status: 413, code: 10413, details: 'The request body is too large.' },
  headersTooLarge: { status: 431, code: 10431, details: 'The request line or headers are too large (16 KiB at most).' },
  unsupportedMediaType: { status: 415, code: 10415, details: 'Unsupported media type. Send Content-Type: application/json.' },
  internal: { status: 500, code: 10500, details: 'An unexpected error occurred. Please try again later.' },
  unavailable: { status: 503, code: 10503, details: 'The service is temporarily unavailable. Please try again later.' },
  statementTimeout: { status: 503, code: 10503, details: 'The request took too long to process and was stopped. Narrow it (fewer or simpler conditions) or try again later.' },
  upstreamUnavailable: { status: 502, code: 10502, details: 'An upstream server (e.g. WHOIS) could not be reached or refused the query. Please try again later.' },
  upstreamTimeout: { status: 504, code: 10504, details: 'An upstream server (e.g. WHOIS) did not answer in time. Please try again later.' },
} as const;

export type GatewayErrorName = keyof typeof gatewayErrors;
export type ApplicationErrorName = keyof typeof applicationErrors;

/** Thrown by hooks to answer with a gateway error; extra headers ride along. */
export class GatewayError extends Error {
  readonly statusCode: number;
  constructor(
    readonly kind: GatewayErrorName,
    readonly headers: Record<string, string | number> = {},
  ) {
    super(gatewayErrors[kind].message);
    this.statusCode = gatewayErrors[kind].status;
  }
}

/** Thrown by handlers to answer with an application error of the catalog; `details` replaces the entry's. */
export class ApplicationError extends Error {
  readonly statusCode: number;
  constructor(
    readonly kind: ApplicationErrorName,
    readonly details?: string,
    readonly headers: Record<string, string | number> = {},
  ) {
    super(details ?? applicationErrors[kind].details ?? kind);
    this.statusCode = applicationErrors[kind].status;
  }
}

/** Markdown table of the catalog, for the API documentation. */
export function describeErrorCatalog(): string {
  const gateway = Object.values(gatewayErrors).map((e) => `| ${e.status} | gateway | \`${e.message}\` |`);
  const application = Object.values(applicationErrors).map((e) => `| ${e.status} | ${e.code} | ${e.details ?? 'one entry per offending input in `parameters`'} |`);
  return [
    '| status | code | message / details |',
    '|---|---|---|',
    ...gateway,
    ...new Set(application),
  ].join('\n');
}
