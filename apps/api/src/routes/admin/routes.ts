import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  addMember,
  clearBounce,
  createOrganization,
  deleteKey,
  generateKey,
  getOrganization,
  listKeys,
  listMembers,
  updateMember,
  listOrganizations,
  removeMember,
  updateKey,
  updateOrganization,
  type OrganizationInput,
} from '@notify/db';
import { keyJson, memberJson, organizationJson } from '@notify/operators';
import { announceKeyInvalidation, bumpRuleListVersion } from '@notify/queues';
import type { AppDeps } from '../../deps';
import type { KeyCache } from '../../plugins/key-cache';
import { applicationRef, gatewayRef } from '../../schemas/common';
import {
  ApiKey,
  GeneratedApiKey,
  KeyCreate,
  KeyParams,
  KeyPatch,
  Member,
  MemberCreate,
  MemberParams,
  MemberPatch,
  Organization,
  OrganizationCreate,
  OrganizationPatch,
  OrgParams,
} from './schemas';

interface PlanBody {
  groups?: Array<'platform' | 'lookup' | 'easm'>;
  rate_limit_per_second?: number;
  rate_limit_per_minute?: number;
  monthly_quota?: number;
  max_rules?: number;
}

function memberInput<T extends { name?: string | null; timezone?: string | null; quiet_hours?: { start_hour: number; end_hour: number } | null }>(body: T) {
  const { quiet_hours: quiet, ...rest } = body;
  return { ...rest, quietHours: quiet === undefined ? undefined : quiet && { startHour: quiet.start_hour, endHour: quiet.end_hour } };
}

function organizationInput(body: { name?: string; timezone?: string; plan?: PlanBody }): OrganizationInput {
  return {
    name: body.name,
    timezone: body.timezone,
    plan: body.plan && {
      groups: body.plan.groups,
      rateLimitPerSecond: body.plan.rate_limit_per_second,
      rateLimitPerMinute: body.plan.rate_limit_per_minute,
      monthlyQuota: body.plan.monthly_quota,
      maxRules: body.plan.max_rules,
    },
  };
}

const config = { auth: 'admin' } as const;
const security = [{ admin: [] }];
const errors = { 400: applicationRef, 401: gatewayRef, 404: applicationRef };

/** The operator API of product decisions §7: organizations, members and keys. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps; keyCache: KeyCache }> = async (app, { deps, keyCache }) => {
  const { db, redis, logger } = deps;
  // Keys and plans are cached by every API instance for up to a second: forget
  // them here at once, and tell the other instances.
  const invalidate = async () => {
    keyCache.clear();
    await announceKeyInvalidation(redis, deps.config.queuePrefix).catch((error) => logger.warn({ err: error }, 'could not announce key invalidation'));
  };
  const tags = ['Operators'];

  app.post('/admin/v1/organizations', {
    config, schema: { tags, security, summary: 'Create an organization', body: OrganizationCreate, response: { 201: Organization, ...errors } },
  }, async (request, reply) => reply.code(201).send(organizationJson(await createOrganization(db, organizationInput(request.body)))));

  app.get('/admin/v1/organizations', {
    config, schema: { tags, security, summary: 'List organizations', response: { 200: Type.Array(Organization), 401: gatewayRef } },
  }, async () => (await listOrganizations(db)).map(organizationJson));

  app.get('/admin/v1/organizations/:org_id', {
    config, schema: { tags, security, summary: 'Get an organization', params: OrgParams, response: { 200: Organization, ...errors } },
  }, async (request) => organizationJson(await getOrganization(db, request.params.org_id)));

  app.patch('/admin/v1/organizations/:org_id', {
    config, schema: { tags, security, summary: 'Change an organization (name, time zone, plan)', params: OrgParams, body: OrganizationPatch, response: { 200: Organization, ...errors } },
  }, async (request) => {
    const org = await updateOrganization(db, request.params.org_id, organizationInput(request.body), deps.now());
    await invalidate();
    // A new time zone moves every digest rule's delivery times.
    await deps.ruleChanges.announce({ organizationIds: [org.id] }).catch((error) => logger.warn({ err: error }, 'could not announce an organization change'));
    return organizationJson(org);
  });

  app.post('/admin/v1/organizations/:org_id/members', {
    config, schema: { tags, security, summary: 'Add a team member', params: OrgParams, body: MemberCreate, response: { 201: Member, 409: applicationRef, ...errors } },
  }, async (request, reply) => reply.code(201).send(memberJson(await addMember(db, request.params.org_id, memberInput(request.body)))));

  app.patch('/admin/v1/organizations/:org_id/members/:team_member_uuid', {
    config,
    schema: {
      tags, security, summary: "Change a member's name, time zone or quiet hours (a new zone moves what their digests owe them: no period twice, none lost)",
      params: MemberParams, body: MemberPatch, response: { 200: Member, ...errors },
    },
  }, async (request) => {
    const member = await updateMember(db, request.params.org_id, request.params.team_member_uuid, memberInput(request.body), deps.now());
    // Digest rules record their matches per member zone: the match stage reloads the organization's rules.
    if (request.body.timezone !== undefined) {
      await deps.ruleChanges.announce({ organizationIds: [member.organizationId] }).catch((error) => logger.warn({ err: error }, 'could not announce a member change'));
    }
    return memberJson(member);
  });

  app.get('/admin/v1/organizations/:org_id/members', {
    config, schema: { tags, security, summary: 'List team members', params: OrgParams, response: { 200: Type.Array(Member), ...errors } },
  }, async (request) => (await listMembers(db, request.params.org_id)).map(memberJson));

  app.delete('/admin/v1/organizations/:org_id/members/:team_member_uuid', {
    config, schema: { tags, security, summary: 'Remove a team member (and from every rule)', params: MemberParams, response: { 204: { type: 'null' }, ...errors } },
  }, async (request, reply) => {
    await removeMember(db, request.params.org_id, request.params.team_member_uuid);
    // Rules list their members: the organization's cached list pages are stale.
    await bumpRuleListVersion(redis, deps.config.queuePrefix, request.params.org_id).catch((error) => logger.warn({ err: error }, 'could not invalidate rule lists'));
    return reply.code(204).send(null);
  });

  app.post('/admin/v1/organizations/:org_id/members/:team_member_uuid/clear-bounce', {
    config, schema: { tags, security, summary: "Clear a member's bouncing address: their e-mails are sent again", params: MemberParams, response: { 200: Member, ...errors } },
  }, async (request) => memberJson(await clearBounce(db, request.params.org_id, request.params.team_member_uuid)));

  app.post('/admin/v1/organizations/:org_id/api-keys', {
    config, schema: { tags, security, summary: "Generate an API key (an organization's first key is its default)", params: OrgParams, body: KeyCreate, response: { 201: GeneratedApiKey, ...errors } },
  }, async (request, reply) => {
    const key = await generateKey(db, request.params.org_id, request.body.name);
    return reply.code(201).send({ ...keyJson(key), key: key.key });
  });

  app.get('/admin/v1/organizations/:org_id/api-keys', {
    config, schema: { tags, security, summary: 'List API keys (without key material)', params: OrgParams, response: { 200: Type.Array(ApiKey), ...errors } },
  }, async (request) => (await listKeys(db, request.params.org_id)).map(keyJson));

  app.patch('/admin/v1/organizations/:org_id/api-keys/:key_id', {
    config, schema: { tags, security, summary: 'Rename a key or make it the default', params: KeyParams, body: KeyPatch, response: { 200: ApiKey, ...errors } },
  }, async (request) => keyJson(await updateKey(db, request.params.org_id, request.params.key_id, { name: request.body.name, isDefault: request.body.is_default })));

  app.delete('/admin/v1/organizations/:org_id/api-keys/:key_id', {
    config, schema: { tags, security, summary: 'Delete a key (409 for the default key)', params: KeyParams, response: { 204: { type: 'null' }, 409: applicationRef, ...errors } },
  }, async (request, reply) => {
    await deleteKey(db, request.params.org_id, request.params.key_id);
    await invalidate();
    return reply.code(204).send(null);
  });
};
