import type { FastifyRequest } from 'fastify';

/** Query parameters whose values are credentials, whatever a client meant by sending them there. */
const SECRET_PARAM = /key|token|secret|passw|auth|session|cookie/i;

/**
 * Fastify's `req` log serializer, with the values of credential-like query parameters masked: a key
 * sent as `?apikey=` is refused (decisions §2), but the "incoming request" line would still have
 * written the URL as it came (found by test/faults/abuse-secrets.test.ts).
 */
export function maskQuerySecrets(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url.slice(start + 1).replace(/(^|&)([^=&]*)=([^&]*)/g, (all, separator: string, name: string) => {
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // An undecodable name is judged as it is.
    }
    return SECRET_PARAM.test(decoded) ? `${separator}${name}=[redacted]` : all;
  });
  return `${url.slice(0, start)}?${query}`;
}

export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: maskQuerySecrets(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket ? request.socket.remotePort : undefined,
  };
}
