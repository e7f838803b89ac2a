import { Type } from 'typebox';
import { PLAN_GROUPS, PLAN_LIMIT_MAX } from '@notify/db';
import { Nullable, StringEnum } from '../../schemas/common';

const positive = (description: string) => Type.Integer({ minimum: 1, maximum: PLAN_LIMIT_MAX, description });

export const PlanInput = Type.Object({
  groups: Type.Optional(Type.Array(StringEnum(PLAN_GROUPS), { maxItems: 3, description: 'Endpoint groups the plan may call.' })),
  rate_limit_per_second: Type.Optional(positive('Requests per second per key.')),
  rate_limit_per_minute: Type.Optional(positive('Requests per minute per key.')),
  monthly_quota: Type.Optional(positive('Lookup calls per key per calendar month (UTC).')),
  max_rules: Type.Optional(positive('Notification rules the organization may hold (default 1000); creating one more is a 403 with code 10403.')),
});

const orgName = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });
const timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin. Default UTC.' });

export const OrganizationCreate = Type.Object({ name: orgName, timezone: Type.Optional(timezone), plan: Type.Optional(PlanInput) });
export const OrganizationPatch = Type.Object({ name: Type.Optional(orgName), timezone: Type.Optional(timezone), plan: Type.Optional(PlanInput) });

export const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    timezone: Type.String(),
    plan: Type.Object({
      groups: Type.Array(Type.String()),
      rate_limit_per_second: Type.Integer(),
      rate_limit_per_minute: Type.Integer(),
      monthly_quota: Type.Integer(),
      max_rules: Type.Integer(),
    }),
    default_api_key_id: Nullable(Type.String({ format: 'uuid' })),
    added_date: Type.String({ format: 'date-time' }),
    last_update_date: Type.String({ format: 'date-time' }),
  },
  { $id: 'Organization' },
);

export const OrgParams = Type.Object({ org_id: Type.String() });
export const MemberParams = Type.Object({ org_id: Type.String(), team_member_uuid: Type.String() });
export const KeyParams = Type.Object({ org_id: Type.String(), key_id: Type.String() });

const MemberZone = Type.String({
  maxLength: 64,
  description: "IANA time zone of the member's digests, quiet hours and e-mail times, such as \"Asia/Tokyo\"; null: the organization's.",
});

const QuietHours = Type.Object(
  {
    start_hour: Type.Integer({ minimum: 0, maximum: 23 }),
    end_hour: Type.Integer({ minimum: 0, maximum: 23 }),
  },
  {
    additionalProperties: false,
    description:
      "Hours [start_hour, end_hour) of the member's day, in their zone (wrapping midnight when start_hour > end_hour), when instant and hourly e-mails wait and go out as one when they end; a batch with a critical event goes at once. null: none.",
  },
);

export const MemberCreate = Type.Object({
  email: Type.String({
    minLength: 1,
    maxLength: 320,
    description: 'One plain ASCII address of at most 254 characters (no display name, no list). Surrounding spaces are trimmed; line breaks and other control characters are refused. Stored lower-cased.',
  }),
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  timezone: Type.Optional(Nullable(MemberZone)),
  quiet_hours: Type.Optional(Nullable(QuietHours)),
});

export const MemberPatch = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  timezone: Type.Optional(Nullable(MemberZone)),
  quiet_hours: Type.Optional(Nullable(QuietHours)),
});

export const Member = Type.Object(
  {
    team_member_uuid: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Nullable(Type.String()),
    added_date: Type.String({ format: 'date-time' }),
    timezone: Nullable(Type.String({ description: "The member's own IANA time zone; null: they follow the organization's." })),
    quiet_hours: Nullable(Type.Object({ start_hour: Type.Integer(), end_hour: Type.Integer() })),
    bouncing: Nullable(Type.Object(
      { since: Type.String({ format: 'date-time' }), reply: Nullable(Type.String()) },
      { description: "The address was refused for good at RCPT TO: the member's e-mails are suppressed until it is cleared." },
    )),
  },
  { $id: 'TeamMember' },
);

export const KeyCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }) });
export const KeyPatch = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' })),
  is_default: Type.Optional(Type.Boolean({ description: 'Only true: makes this key the default.' })),
});

const keyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  is_default: Type.Boolean(),
  added_date: Type.String({ format: 'date-time' }),
};

export const ApiKey = Type.Object(keyFields, { $id: 'ApiKey' });
export const GeneratedApiKey = Type.Object(
  { ...keyFields, key: Type.String({ description: 'The key itself. Shown this once: only its hash is stored.' }) },
  { $id: 'GeneratedApiKey' },
);
