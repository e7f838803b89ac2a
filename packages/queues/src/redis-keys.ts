/**
 * Every Redis key and channel of the system other than BullMQ's own (catalog.ts names the queues,
 * whose keys BullMQ makes under the same prefix), in one place. All live under the configured
 * prefix (`QUEUE_PREFIX`): the processes of one deployment meet there, and another deployment or
 * test file on the same Redis never does.
 */
export interface RedisKeys {
  /** A WHOIS answer, shared by every instance for WHOIS_CACHE_SECONDS. */
  whois(domain: string): string;
  /** Prefix of the rate-limit and quota windows (leased tokens, see the API's rate-limit store). */
  readonly rateLimit: string;
  /** An organization's rule-list version: every rule write bumps it, so cached list pages go stale. */
  ruleListVersion(organizationId: string): string;
  /** A revoked operator console session, kept until the session would have expired. */
  adminSessionRevoked(sessionId: string): string;
  /**
   * Failed authentication of one client address, and of the whole fleet (`authFailuresTotal`): one
   * script counts both, so they share a hash tag (one cluster slot).
   */
  authFailures(address: string): string;
  readonly authFailuresTotal: string;
  /** Test sends of a rule in the current minute (at most 5; the key expires with the minute). */
  testSends(ruleId: string): string;
}

/** Pub/sub channels: a message on one reaches every process of the deployment. */
export interface RedisChannels {
  /** A key was deleted or a plan changed: every API instance forgets the keys it cached. */
  readonly apiKeysInvalidated: string;
  /** Rules changed: the match stage's rule index in every process reloads the rules named (a RuleChange, as JSON). */
  readonly rulesChanged: string;
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    whois: (domain) => `${prefix}:whois:${domain}`,
    rateLimit: `${prefix}:rl:`,
    ruleListVersion: (organizationId) => `${prefix}:rules-version:${organizationId}`,
    adminSessionRevoked: (sessionId) => `${prefix}:admin-session:revoked:${sessionId}`,
    authFailures: (address) => `${prefix}:{auth-failures}:${address}`,
    authFailuresTotal: `${prefix}:{auth-failures}:*`,
    testSends: (ruleId) => `${prefix}:test-sends:${ruleId}`,
  };
}

export function redisChannels(prefix: string): RedisChannels {
  return {
    apiKeysInvalidated: `${prefix}:api-keys:invalidate`,
    rulesChanged: `${prefix}:rules:changed`,
  };
}
