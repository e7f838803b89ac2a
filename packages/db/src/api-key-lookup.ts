/**
 * Authentication's look-up of a presented key: a thin front over sql/ (sql style), one indexed
 * statement on every authenticated request (sql/read-key-holder). The keys' management is Prisma,
 * in api-keys.ts.
 */
import { hashApiKey } from '@notify/core';
import type { Database } from './client';
import { PLAN_GROUPS, type Plan, type PlanGroup } from './organizations';
import { readKeyHolder } from './sql/read-key-holder';

/** What authentication needs to know about the holder of a key. */
export interface KeyPrincipal {
  keyId: string;
  organizationId: string;
  /** What the gateway needs of the plan (max_rules is checked where rules are created). */
  plan: Omit<Plan, 'maxRules'>;
}

/** Looks a presented key up by its hash: one indexed query, no key material compared in SQL. */
export async function findPrincipalByKey(db: Database, key: string): Promise<KeyPrincipal | null> {
  const row = await readKeyHolder(db, hashApiKey(key));
  if (!row) return null;
  return {
    keyId: row.key_id,
    organizationId: row.organization_id,
    plan: {
      groups: (row.plan_groups ?? []).filter((group): group is PlanGroup => (PLAN_GROUPS as readonly string[]).includes(group)),
      rateLimitPerSecond: row.rate_limit_per_second,
      rateLimitPerMinute: row.rate_limit_per_minute,
      monthlyQuota: row.monthly_quota,
    },
  };
}
