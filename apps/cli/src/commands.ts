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
  type Database,
  type OrganizationInput,
  type PlanGroup,
} from '@notify/db';
import { keyJson, memberJson, organizationJson } from '@notify/operators';

export interface CommandContext {
  db: Database;
  /** Tells running API instances to forget cached keys and plans. */
  invalidateKeys(): Promise<void>;
  /** Tells running API instances that an organization's rule lists changed (members shown in them). */
  rulesChanged?(organizationId: string): Promise<void>;
  /** Tells the match stage that member time zones of an organization changed (its digest rules record matches per zone). */
  clocksChanged?(organizationId: string): Promise<void>;
}

export type Flags = Record<string, string | undefined>;

export class UsageError extends Error {
  override name = 'UsageError';
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`Missing ${what}.`);
  return value;
}

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} takes a whole number.`);
  return Number(value);
}

/** --quiet-hours 22-7 (start-end, hours of the member's day), or "none". */
function quietHours(value: string | undefined): { startHour: number; endHour: number } | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const hours = /^(\d{1,2})-(\d{1,2})$/.exec(value);
  if (!hours) throw new UsageError('--quiet-hours takes START-END in whole hours (such as 22-7), or none.');
  return { startHour: Number(hours[1]), endHour: Number(hours[2]) };
}

/** --timezone ZONE, or "none" to follow the organization's. */
function memberZone(value: string | undefined): string | null | undefined {
  return value === 'none' ? null : value;
}

function organizationInput(flags: Flags): OrganizationInput {
  const plan = {
    groups: flags.groups === undefined ? undefined : (flags.groups.split(',').map((g) => g.trim()).filter(Boolean) as PlanGroup[]),
    rateLimitPerSecond: integer(flags.rps, 'rps'),
    rateLimitPerMinute: integer(flags.rpm, 'rpm'),
    monthlyQuota: integer(flags.quota, 'quota'),
    maxRules: integer(flags['max-rules'], 'max-rules'),
  };
  return { name: flags.name, timezone: flags.timezone, plan };
}

export const USAGE = `Usage: npm run cli -- <command> [arguments] [--flags]

  org create --name NAME [--timezone ZONE] [--groups platform,lookup,easm] [--rps N] [--rpm N] [--quota N] [--max-rules N]
  org list
  org show ORG_ID
  org update ORG_ID [--name NAME] [--timezone ZONE] [--groups ...] [--rps N] [--rpm N] [--quota N] [--max-rules N]
  member add ORG_ID --email EMAIL [--name NAME] [--timezone ZONE] [--quiet-hours START-END]
  member update ORG_ID MEMBER_ID [--name NAME] [--timezone ZONE|none] [--quiet-hours START-END|none]
  member list ORG_ID
  member remove ORG_ID MEMBER_ID
  member clear-bounce ORG_ID MEMBER_ID
  key generate ORG_ID --name NAME        (prints the key once)
  key list ORG_ID
  key rename ORG_ID KEY_ID --name NAME
  key default ORG_ID KEY_ID
  key delete ORG_ID KEY_ID               (the default key cannot be deleted)

Configuration comes from the environment (DATABASE_URL, DATABASE_SCHEMA, REDIS_URL). Output is JSON.
Exit codes: 0 done, 1 refused (invalid input, not found, conflict), 2 usage error.`;

/** Runs one operator command over the same domain code as the operator API; returns what to print. */
export async function runCommand(context: CommandContext, args: string[], flags: Flags): Promise<unknown> {
  const { db } = context;
  const [noun, verb, first, second] = args;
  switch (`${noun ?? ''} ${verb ?? ''}`) {
    case 'org create':
      return organizationJson(await createOrganization(db, organizationInput(flags)));
    case 'org list':
      return (await listOrganizations(db)).map(organizationJson);
    case 'org show':
      return organizationJson(await getOrganization(db, required(first, 'ORG_ID')));
    case 'org update': {
      const org = await updateOrganization(db, required(first, 'ORG_ID'), organizationInput(flags));
      await context.invalidateKeys();
      if (flags.timezone !== undefined) await context.clocksChanged?.(org.id);
      return organizationJson(org);
    }
    case 'member add':
      return memberJson(
        await addMember(db, required(first, 'ORG_ID'), {
          email: required(flags.email, '--email'), name: flags.name, timezone: memberZone(flags.timezone), quietHours: quietHours(flags['quiet-hours']),
        }),
      );
    case 'member update': {
      const member = await updateMember(
        db, required(first, 'ORG_ID'), required(second, 'MEMBER_ID'),
        { name: flags.name, timezone: memberZone(flags.timezone), quietHours: quietHours(flags['quiet-hours']) },
        new Date(),
      );
      if (flags.timezone !== undefined) await context.clocksChanged?.(member.organizationId);
      return memberJson(member);
    }
    case 'member list':
      return (await listMembers(db, required(first, 'ORG_ID'))).map(memberJson);
    case 'member remove':
      await removeMember(db, required(first, 'ORG_ID'), required(second, 'MEMBER_ID'));
      await context.rulesChanged?.(required(first, 'ORG_ID'));
      return { removed: second };
    case 'member clear-bounce':
      return memberJson(await clearBounce(db, required(first, 'ORG_ID'), required(second, 'MEMBER_ID')));
    case 'key generate': {
      const key = await generateKey(db, required(first, 'ORG_ID'), required(flags.name, '--name'));
      return { ...keyJson(key), key: key.key };
    }
    case 'key list':
      return (await listKeys(db, required(first, 'ORG_ID'))).map(keyJson);
    case 'key rename':
      return keyJson(await updateKey(db, required(first, 'ORG_ID'), required(second, 'KEY_ID'), { name: required(flags.name, '--name') }));
    case 'key default': {
      const key = await updateKey(db, required(first, 'ORG_ID'), required(second, 'KEY_ID'), { isDefault: true });
      return keyJson(key);
    }
    case 'key delete':
      await deleteKey(db, required(first, 'ORG_ID'), required(second, 'KEY_ID'));
      await context.invalidateKeys();
      return { deleted: second };
    default:
      throw new UsageError(`Unknown command "${args.join(' ')}".`);
  }
}
