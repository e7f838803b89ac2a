import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The token of an `Authorization: Bearer …` header, if there is one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  return /^Bearer\s+(.+)$/i.exec(header.trim())?.[1];
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether a presented token is one of `expected` (unset or empty ones match nothing), compared in
 * constant time: hashing first evens out their lengths. The expected tokens are hashed once, here,
 * and a presented one once a call, whatever the number of tokens (ingest and /metrics take several).
 */
export function secretChecker(expected: ReadonlyArray<string | undefined>): (presented: string | undefined) => boolean {
  const digests = expected.filter((token): token is string => typeof token === 'string' && token !== '').map(digest);
  return (presented) => {
    if (presented === undefined || !digests.length) return false;
    const presentedDigest = digest(presented);
    // Every digest is compared, so the time does not tell which token matched.
    let matched = false;
    for (const expectedDigest of digests) matched = timingSafeEqual(presentedDigest, expectedDigest) || matched;
    return matched;
  };
}
