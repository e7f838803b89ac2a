import {
  addMember,
  clearBounce,
  createOrganization,
  deleteKey,
  generateKey,
  getOrganization,
  listKeys,
  listMembers,
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
  member add ORG_ID --email EMAIL [--name NAME]
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
      return organizationJson(org);
    }
    case 'member add':
      return memberJson(await addMember(db, required(first, 'ORG_ID'), { email: required(flags.email, '--email'), name: flags.name }));
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
