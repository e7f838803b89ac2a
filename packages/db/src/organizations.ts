/**
 * Organizations and their plans: ordinary CRUD in Prisma (Prisma style). The two steps Prisma
 * cannot express are sql/ operations, called here and written there: whether PostgreSQL's own tz
 * database knows a zone (sql/zone-known-to-database), and a change of zone, which locks the
 * organization's members and moves their digests in one transaction
 * (sql/change-organization-time-zone).
 */
import { isUuid, isValidTimeZone, messages, NotFound, ValidationFailed, type FieldIssue } from '@notify/core';
import type { Database } from './client';
import { changeOrganizationTimeZone } from './sql/change-organization-time-zone';
import { zoneKnownToDatabase } from './sql/zone-known-to-database';

export { zoneKnownToDatabase } from './sql/zone-known-to-database';

export const PLAN_GROUPS = ['platform', 'lookup', 'easm'] as const;
export type PlanGroup = (typeof PLAN_GROUPS)[number];

/** The largest rate limit or quota a plan may hold (the columns are 32-bit integers). */
export const PLAN_LIMIT_MAX = 1_000_000_000;

export interface Plan {
  groups: PlanGroup[];
  rateLimitPerSecond: number;
  rateLimitPerMinute: number;
  monthlyQuota: number;
  /** Notification rules the organization may hold. */
  maxRules: number;
}

export interface Organization {
  id: string;
  name: string;
  timezone: string;
  plan: Plan;
  defaultApiKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrganizationInput {
  name?: string;
  timezone?: string;
  plan?: Partial<Plan>;
}

interface OrganizationRow {
  id: string;
  name: string;
  timezone: string;
  planGroups: string[];
  rateLimitPerSecond: number;
  rateLimitPerMinute: number;
  monthlyQuota: number;
  maxRules: number;
  defaultApiKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    timezone: row.timezone,
    plan: {
      groups: row.planGroups.filter((group): group is PlanGroup => (PLAN_GROUPS as readonly string[]).includes(group)),
      rateLimitPerSecond: row.rateLimitPerSecond,
      rateLimitPerMinute: row.rateLimitPerMinute,
      monthlyQuota: row.monthlyQuota,
      maxRules: row.maxRules,
    },
    defaultApiKeyId: row.defaultApiKeyId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The semantic checks the HTTP schema cannot make, so the CLI gets them too. */
function validate(input: OrganizationInput, creating: boolean): void {
  const issues: FieldIssue[] = [];
  if (input.name !== undefined || creating) {
    const name = input.name?.trim() ?? '';
    if (name === '') issues.push({ param: 'name', details: [input.name === undefined ? messages.required : messages.notBlank] });
    else if (name.length > 255) issues.push({ param: 'name', details: [messages.maxLength(255)] });
  }
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) {
    issues.push({ param: 'timezone', details: [messages.timezone(input.timezone)] });
  }
  const plan = input.plan ?? {};
  for (const group of plan.groups ?? []) {
    if (!(PLAN_GROUPS as readonly string[]).includes(group)) issues.push({ param: 'plan.groups', details: [messages.choice(group)] });
  }
  for (const [param, value] of [
    ['plan.rate_limit_per_second', plan.rateLimitPerSecond],
    ['plan.rate_limit_per_minute', plan.rateLimitPerMinute],
    ['plan.monthly_quota', plan.monthlyQuota],
    ['plan.max_rules', plan.maxRules],
  ] as const) {
    if (value === undefined) continue;
    if (!Number.isInteger(value)) issues.push({ param, details: [messages.integer] });
    else if (value < 1) issues.push({ param, details: [messages.min(1)] });
    else if (value > PLAN_LIMIT_MAX) issues.push({ param, details: [messages.max(PLAN_LIMIT_MAX)] });
  }
  if (issues.length) throw new ValidationFailed(issues);
}

function planColumns(plan: Partial<Plan> | undefined) {
  return {
    ...(plan?.groups && { planGroups: [...new Set(plan.groups)] }),
    ...(plan?.rateLimitPerSecond !== undefined && { rateLimitPerSecond: plan.rateLimitPerSecond }),
    ...(plan?.rateLimitPerMinute !== undefined && { rateLimitPerMinute: plan.rateLimitPerMinute }),
    ...(plan?.monthlyQuota !== undefined && { monthlyQuota: plan.monthlyQuota }),
    ...(plan?.maxRules !== undefined && { maxRules: plan.maxRules }),
  };
}

export async function createOrganization(db: Database, input: OrganizationInput): Promise<Organization> {
  validate(input, true);
  if (input.timezone !== undefined && !(await zoneKnownToDatabase(db, input.timezone))) {
    throw new ValidationFailed([{ param: 'timezone', details: [messages.timezone(input.timezone)] }]);
  }
  const row = await db.prisma.organization.create({
    data: { name: input.name!.trim(), timezone: input.timezone ?? 'UTC', ...planColumns(input.plan) },
  });
  return toOrganization(row);
}

export async function listOrganizations(db: Database): Promise<Organization[]> {
  const rows = await db.prisma.organization.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(toOrganization);
}

export async function getOrganization(db: Database, id: string): Promise<Organization> {
  const row = isUuid(id) ? await db.prisma.organization.findUnique({ where: { id } }) : null;
  if (!row) throw new NotFound('Organization not found.');
  return toOrganization(row);
}

export async function updateOrganization(db: Database, id: string, input: OrganizationInput, now: Date = new Date()): Promise<Organization> {
  validate(input, false);
  if (!isUuid(id)) throw new NotFound('Organization not found.');
  if (input.timezone !== undefined) {
    if (!(await zoneKnownToDatabase(db, input.timezone))) throw new ValidationFailed([{ param: 'timezone', details: [messages.timezone(input.timezone)] }]);
    await changeOrganizationTimeZone(db, id, input.timezone, now);
  }
  const result = await db.prisma.organization.updateManyAndReturn({
    where: { id },
    data: { ...(input.name !== undefined && { name: input.name.trim() }), ...planColumns(input.plan) },
  });
  const row = result[0];
  if (!row) throw new NotFound('Organization not found.');
  return toOrganization(row);
}
