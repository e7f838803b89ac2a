import type { ApiKeyInfo, Organization, TeamMember } from '@notify/db';

/**
 * The JSON of the operator API's resources. The CLI prints the same, so an operator reads one
 * shape whichever door they used.
 */

export function organizationJson(org: Organization) {
  return {
    id: org.id,
    name: org.name,
    timezone: org.timezone,
    plan: {
      groups: org.plan.groups,
      rate_limit_per_second: org.plan.rateLimitPerSecond,
      rate_limit_per_minute: org.plan.rateLimitPerMinute,
      monthly_quota: org.plan.monthlyQuota,
      max_rules: org.plan.maxRules,
    },
    default_api_key_id: org.defaultApiKeyId,
    added_date: org.createdAt.toISOString(),
    last_update_date: org.updatedAt.toISOString(),
  };
}

export function memberJson(member: TeamMember) {
  return {
    team_member_uuid: member.id,
    email: member.email,
    name: member.name,
    added_date: member.createdAt.toISOString(),
    timezone: member.timezone,
    quiet_hours: member.quietStartHour === null || member.quietEndHour === null ? null : { start_hour: member.quietStartHour, end_hour: member.quietEndHour },
    bouncing: member.bouncingSince ? { since: member.bouncingSince.toISOString(), reply: member.bounceReply } : null,
  };
}

export function keyJson(key: ApiKeyInfo) {
  return { id: key.id, name: key.name, prefix: key.prefix, is_default: key.isDefault, added_date: key.createdAt.toISOString() };
}
