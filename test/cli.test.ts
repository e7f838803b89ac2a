import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conflict, NotFound, ValidationFailed } from '@notify/core';
import { findPrincipalByKey } from '@notify/db';
import { runCli, type CliSession } from '../apps/cli/src/cli';
import { runCommand, UsageError, USAGE, type CommandContext, type Flags } from '../apps/cli/src/commands';
import { createTestDatabase, DATABASE_URL, REDIS_URL } from './support/database';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = /^[A-Za-z0-9]{32}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

interface OrgJson {
  id: string;
  name: string;
  timezone: string;
  plan: { groups: string[]; rate_limit_per_second: number; rate_limit_per_minute: number; monthly_quota: number; max_rules: number };
  default_api_key_id: string | null;
}
interface MemberJson {
  team_member_uuid: string;
  email: string;
  name: string | null;
}
interface KeyJson {
  id: string;
  name: string;
  is_default: boolean;
  key?: string;
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let invalidations = 0;
let context: CommandContext;

beforeAll(async () => {
  db = await createTestDatabase();
  context = {
    db,
    invalidateKeys: async () => {
      invalidations++;
    },
  };
});
afterAll(async () => db?.drop());

/** Runs one command over the domain code, as the CLI does, and returns what it would print. */
const run = async <T = unknown>(args: string[], flags: Flags = {}): Promise<T> => (await runCommand(context, args, flags)) as T;

/** The error a command fails with. */
async function failure(args: string[], flags: Flags = {}): Promise<Error> {
  try {
    await runCommand(context, args, flags);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`"${args.join(' ')}" succeeded`);
}

async function validationIssues(args: string[], flags: Flags = {}): Promise<Record<string, string[]>> {
  const error = await failure(args, flags);
  expect(error).toBeInstanceOf(ValidationFailed);
  return Object.fromEntries((error as ValidationFailed).parameters.map((issue) => [issue.param, issue.details]));
}

describe('operator CLI commands: organizations', () => {
  it('org create applies the defaults', async () => {
    const org = await run<OrgJson>(['org', 'create'], { name: 'Acme' });
    expect(org).toMatchObject({
      id: expect.stringMatching(UUID) as unknown,
      name: 'Acme',
      timezone: 'UTC',
      plan: { groups: ['platform'], rate_limit_per_second: 10, rate_limit_per_minute: 300, monthly_quota: 1000 },
      default_api_key_id: null,
    });
  });

  it('org create takes a time zone and a plan from the flags', async () => {
    const org = await run<OrgJson>(['org', 'create'], {
      name: 'Globex',
      timezone: 'Europe/Berlin',
      groups: 'platform, lookup,,easm',
      rps: '5',
      rpm: '100',
      quota: '25000',
      'max-rules': '50',
    });
    expect(org).toMatchObject({
      name: 'Globex',
      timezone: 'Europe/Berlin',
      plan: { groups: ['platform', 'lookup', 'easm'], rate_limit_per_second: 5, rate_limit_per_minute: 100, monthly_quota: 25000, max_rules: 50 },
    });
  });

  it('org create validates like the operator API', async () => {
    expect(await validationIssues(['org', 'create'], {})).toEqual({ name: ['This field is required.'] });
    expect(await validationIssues(['org', 'create'], { name: '  ' })).toEqual({ name: ['This field may not be blank.'] });
    expect(await validationIssues(['org', 'create'], { name: 'Z', timezone: 'Mars/Base' })).toEqual({
      timezone: ['"Mars/Base" is not a valid time zone. Use an IANA name such as "Europe/Berlin".'],
    });
    expect(await validationIssues(['org', 'create'], { name: 'Z', groups: 'platform,gold' })).toEqual({
      'plan.groups': ['"gold" is not a valid choice.'],
    });
    expect(await validationIssues(['org', 'create'], { name: 'Z', rps: '0', quota: '0' })).toEqual({
      'plan.rate_limit_per_second': ['Ensure this value is greater than or equal to 1.'],
      'plan.monthly_quota': ['Ensure this value is greater than or equal to 1.'],
    });
  });

  it('org create refuses limits beyond what the API accepts, rather than failing in the database', async () => {
    // The operator API caps the plan numbers at 1,000,000,000; the CLI must not store more.
    expect(await validationIssues(['org', 'create'], { name: 'Big', rpm: '99999999999' })).toEqual({
      'plan.rate_limit_per_minute': ['Ensure this value is less than or equal to 1000000000.'],
    });
    expect(await validationIssues(['org', 'create'], { name: 'Big', quota: '1000000001' })).toEqual({
      'plan.monthly_quota': ['Ensure this value is less than or equal to 1000000000.'],
    });
    const org = await run<OrgJson>(['org', 'create'], { name: 'Biggest', quota: '1000000000' });
    expect(org.plan.monthly_quota).toBe(1_000_000_000);
  });

  it('a number flag that is not a whole number is a usage error', async () => {
    for (const rps of ['abc', '1.5', '-3', '']) {
      const error = await failure(['org', 'create'], { name: 'N', rps });
      expect(error).toBeInstanceOf(UsageError);
      expect(error.message).toBe('--rps takes a whole number.');
    }
  });

  it('org create stores nothing when it refuses', async () => {
    const before = await run<OrgJson[]>(['org', 'list']);
    await failure(['org', 'create'], { name: 'Nope', timezone: 'Nowhere/Nothing' });
    await failure(['org', 'create'], { name: 'Nope', rps: 'x' });
    expect(await run<OrgJson[]>(['org', 'list'])).toEqual(before);
  });

  it('org list shows every organization in creation order; org show shows one', async () => {
    const first = await run<OrgJson>(['org', 'create'], { name: 'Listed A' });
    const second = await run<OrgJson>(['org', 'create'], { name: 'Listed B' });
    const list = await run<OrgJson[]>(['org', 'list']);
    const ids = list.map((org) => org.id);
    expect(ids.indexOf(second.id)).toBe(ids.indexOf(first.id) + 1);
    expect(list.find((org) => org.id === first.id)).toEqual(first);
    expect(await run(['org', 'show', second.id])).toEqual(second);
  });

  it('org show answers "not found" for an unknown or malformed id, and needs an id', async () => {
    for (const id of [UNKNOWN_ID, 'acme']) {
      const error = await failure(['org', 'show', id]);
      expect(error).toBeInstanceOf(NotFound);
      expect((error as NotFound).details).toBe('Organization not found.');
    }
    const missing = await failure(['org', 'show']);
    expect(missing).toBeInstanceOf(UsageError);
    expect(missing.message).toBe('Missing ORG_ID.');
  });

  it('org update changes what its flags name, keeps the rest and tells the API to forget cached plans', async () => {
    const org = await run<OrgJson>(['org', 'create'], { name: 'Before', groups: 'platform,lookup', quota: '50' });
    const before = invalidations;
    const updated = await run<OrgJson>(['org', 'update', org.id], { name: 'After', timezone: 'Asia/Tokyo', rps: '7' });
    expect(updated).toMatchObject({
      id: org.id,
      name: 'After',
      timezone: 'Asia/Tokyo',
      plan: { groups: ['platform', 'lookup'], rate_limit_per_second: 7, rate_limit_per_minute: 300, monthly_quota: 50 },
    });
    expect(invalidations).toBe(before + 1);
    expect(await run(['org', 'show', org.id])).toEqual(updated);

    const regrouped = await run<OrgJson>(['org', 'update', org.id], { groups: 'easm' });
    expect(regrouped.plan.groups).toEqual(['easm']);
    expect(regrouped.name).toBe('After');
  });

  it('org update refuses invalid changes and unknown organizations', async () => {
    const org = await run<OrgJson>(['org', 'create'], { name: 'Steady' });
    expect(Object.keys(await validationIssues(['org', 'update', org.id], { timezone: 'Europe/Atlantis' }))).toEqual(['timezone']);
    expect(Object.keys(await validationIssues(['org', 'update', org.id], { name: '' }))).toEqual(['name']);
    expect(await failure(['org', 'update', UNKNOWN_ID], { name: 'Ghost' })).toBeInstanceOf(NotFound);
    expect(await failure(['org', 'update'], { name: 'Ghost' })).toBeInstanceOf(UsageError);
    expect(await run(['org', 'show', org.id])).toMatchObject({ name: 'Steady', timezone: 'UTC' });
  });
});

describe('operator CLI commands: members', () => {
  let org: OrgJson;
  beforeAll(async () => {
    org = await run<OrgJson>(['org', 'create'], { name: 'Members' });
  });

  it('member add lower-cases the e-mail address; member list shows the members', async () => {
    const alice = await run<MemberJson>(['member', 'add', org.id], { email: 'Alice@Example.COM', name: 'Alice' });
    expect(alice).toMatchObject({ team_member_uuid: expect.stringMatching(UUID) as unknown, email: 'alice@example.com', name: 'Alice' });
    const bob = await run<MemberJson>(['member', 'add', org.id], { email: 'bob@example.com' });
    expect(bob.name).toBeNull();
    expect(await run(['member', 'list', org.id])).toEqual([alice, bob]);
  });

  it('member add refuses an invalid address, a duplicate and an unknown organization', async () => {
    expect(await validationIssues(['member', 'add', org.id], { email: 'not-an-email' })).toEqual({ email: ['Enter a valid email address.'] });
    const duplicate = await failure(['member', 'add', org.id], { email: 'ALICE@example.com' });
    expect(duplicate).toBeInstanceOf(Conflict);
    expect((duplicate as Conflict).details).toBe('A member with this e-mail address already exists in the organization.');
    expect(await failure(['member', 'add', UNKNOWN_ID], { email: 'carol@example.com' })).toBeInstanceOf(NotFound);
    const missing = await failure(['member', 'add', org.id], {});
    expect(missing).toBeInstanceOf(UsageError);
    expect(missing.message).toBe('Missing --email.');
    expect(await run<MemberJson[]>(['member', 'list', org.id])).toHaveLength(2);
  });

  it('member remove removes one member; unknown or foreign members are not found', async () => {
    const other = await run<OrgJson>(['org', 'create'], { name: 'Other members' });
    const foreign = await run<MemberJson>(['member', 'add', other.id], { email: 'foreign@example.com' });
    const temp = await run<MemberJson>(['member', 'add', org.id], { email: 'temp@example.com' });

    expect(await run(['member', 'remove', org.id, temp.team_member_uuid])).toEqual({ removed: temp.team_member_uuid });
    expect((await run<MemberJson[]>(['member', 'list', org.id])).map((member) => member.email)).toEqual(['alice@example.com', 'bob@example.com']);

    for (const id of [temp.team_member_uuid, UNKNOWN_ID, 'nobody', foreign.team_member_uuid]) {
      const error = await failure(['member', 'remove', org.id, id]);
      expect(error).toBeInstanceOf(NotFound);
      expect((error as NotFound).details).toBe('Team member not found.');
    }
    expect(await run(['member', 'list', other.id])).toEqual([foreign]);
    expect(await failure(['member', 'remove', org.id])).toBeInstanceOf(UsageError);
  });

  it("member update sets a member's time zone and quiet hours, and none clears them", async () => {
    const night = await run<MemberJson>(['member', 'add', org.id], { email: 'night@example.com', timezone: 'Asia/Tokyo', 'quiet-hours': '22-7' });
    expect(night).toMatchObject({ timezone: 'Asia/Tokyo', quiet_hours: { start_hour: 22, end_hour: 7 } });
    const moved = await run<MemberJson>(['member', 'update', org.id, night.team_member_uuid], { timezone: 'Europe/Berlin' });
    expect(moved).toMatchObject({ timezone: 'Europe/Berlin', quiet_hours: { start_hour: 22, end_hour: 7 } });
    const cleared = await run<MemberJson>(['member', 'update', org.id, night.team_member_uuid], { timezone: 'none', 'quiet-hours': 'none' });
    expect(cleared).toMatchObject({ timezone: null, quiet_hours: null });
    expect(await validationIssues(['member', 'update', org.id, night.team_member_uuid], { timezone: 'Mars/Olympus' })).toEqual({
      timezone: ['"Mars/Olympus" is not a valid time zone. Use an IANA name such as "Europe/Berlin".'],
    });
    expect(await validationIssues(['member', 'update', org.id, night.team_member_uuid], { 'quiet-hours': '25-7' })).toEqual({ 'quiet_hours.start_hour': ['Ensure this value is less than or equal to 23.'] });
    expect(await failure(['member', 'update', org.id, night.team_member_uuid], { 'quiet-hours': 'nights' })).toBeInstanceOf(UsageError);
    expect(await failure(['member', 'update', org.id, UNKNOWN_ID], { timezone: 'UTC' })).toBeInstanceOf(NotFound);
    await run(['member', 'remove', org.id, night.team_member_uuid]);
  });
});

describe('operator CLI commands: API keys', () => {
  let org: OrgJson;
  let first: KeyJson & { key: string };
  let second: KeyJson & { key: string };
  const defaults = async () => (await run<KeyJson[]>(['key', 'list', org.id])).filter((key) => key.is_default).map((key) => key.id);

  beforeAll(async () => {
    org = await run<OrgJson>(['org', 'create'], { name: 'Keys' });
  });

  it('key generate prints the key, once; the first key is the default', async () => {
    first = await run(['key', 'generate', org.id], { name: 'Production' });
    expect(first).toMatchObject({ id: expect.stringMatching(UUID) as unknown, name: 'Production', is_default: true });
    expect(first.key).toMatch(KEY);
    second = await run(['key', 'generate', org.id], { name: 'Staging' });
    expect(second).toMatchObject({ name: 'Staging', is_default: false });
    expect(second.key).toMatch(KEY);
    expect(second.key).not.toBe(first.key);
    // The printed key is the one that authenticates.
    expect((await findPrincipalByKey(db, first.key))?.keyId).toBe(first.id);
    expect((await run<OrgJson>(['org', 'show', org.id])).default_api_key_id).toBe(first.id);
  });

  it('key generate needs a name and a known organization', async () => {
    const missing = await failure(['key', 'generate', org.id]);
    expect(missing).toBeInstanceOf(UsageError);
    expect(missing.message).toBe('Missing --name.');
    expect(await validationIssues(['key', 'generate', org.id], { name: '   ' })).toEqual({ name: ['This field may not be blank.'] });
    expect(await failure(['key', 'generate', UNKNOWN_ID], { name: 'Ghost' })).toBeInstanceOf(NotFound);
  });

  it('key list never shows key material', async () => {
    const list = await run<KeyJson[]>(['key', 'list', org.id]);
    expect(list.map((key) => [key.id, key.name, key.is_default])).toEqual([
      [first.id, 'Production', true],
      [second.id, 'Staging', false],
    ]);
    for (const key of list) expect(key).not.toHaveProperty('key');
    const printed = JSON.stringify(list);
    expect(printed).not.toContain(first.key);
    expect(printed).not.toContain(second.key);
  });

  it('key rename renames a key', async () => {
    const renamed = await run<KeyJson>(['key', 'rename', org.id, second.id], { name: 'Staging EU' });
    expect(renamed).toMatchObject({ id: second.id, name: 'Staging EU', is_default: false });
    expect(renamed).not.toHaveProperty('key');
    expect((await run<KeyJson[]>(['key', 'list', org.id])).map((key) => key.name)).toEqual(['Production', 'Staging EU']);
    expect(await failure(['key', 'rename', org.id, second.id])).toBeInstanceOf(UsageError);
    expect(await failure(['key', 'rename', org.id, UNKNOWN_ID], { name: 'Ghost' })).toBeInstanceOf(NotFound);
  });

  it('key delete refuses the default key with the conflict message, and the key keeps working', async () => {
    const error = await failure(['key', 'delete', org.id, first.id]);
    expect(error).toBeInstanceOf(Conflict);
    expect((error as Conflict).details).toBe('The default API key cannot be deleted. Make another key the default first.');
    expect(await findPrincipalByKey(db, first.key)).not.toBeNull();
  });

  it('key default makes another key the default, leaving exactly one', async () => {
    const made = await run<KeyJson>(['key', 'default', org.id, second.id]);
    expect(made).toMatchObject({ id: second.id, is_default: true });
    expect(await defaults()).toEqual([second.id]);
    expect((await run<OrgJson>(['org', 'show', org.id])).default_api_key_id).toBe(second.id);
    expect(await failure(['key', 'delete', org.id, second.id])).toBeInstanceOf(Conflict);
  });

  it('key delete deletes the former default, which stops authenticating, and tells the API to forget it', async () => {
    const before = invalidations;
    expect(await run(['key', 'delete', org.id, first.id])).toEqual({ deleted: first.id });
    expect(invalidations).toBe(before + 1);
    expect(await findPrincipalByKey(db, first.key)).toBeNull();
    expect((await run<KeyJson[]>(['key', 'list', org.id])).map((key) => key.id)).toEqual([second.id]);
    expect(await failure(['key', 'delete', org.id, first.id])).toBeInstanceOf(NotFound);
  });

  it("key commands do not reach another organization's keys", async () => {
    const other = await run<OrgJson>(['org', 'create'], { name: 'Other keys' });
    const otherKey = await run<KeyJson & { key: string }>(['key', 'generate', other.id], { name: 'Theirs' });
    const otherSecond = await run<KeyJson & { key: string }>(['key', 'generate', other.id], { name: 'Theirs too' });
    for (const id of [otherKey.id, otherSecond.id]) {
      expect(await failure(['key', 'delete', org.id, id])).toBeInstanceOf(NotFound);
      expect(await failure(['key', 'rename', org.id, id], { name: 'Mine' })).toBeInstanceOf(NotFound);
      expect(await failure(['key', 'default', org.id, id])).toBeInstanceOf(NotFound);
    }
    expect((await run<KeyJson[]>(['key', 'list', other.id])).map((key) => [key.name, key.is_default])).toEqual([
      ['Theirs', true],
      ['Theirs too', false],
    ]);
    expect(await defaults()).toEqual([second.id]);
    expect(await findPrincipalByKey(db, otherSecond.key)).not.toBeNull();
  });
});

describe('operator CLI: output and exit codes', () => {
  let opened = 0;
  let closed = 0;
  const open = async (): Promise<CliSession> => {
    opened++;
    return {
      context,
      close: async () => {
        closed++;
      },
    };
  };

  async function cli(...argv: string[]) {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli(argv, { out: (text) => stdout.push(text), err: (text) => stderr.push(text) }, open);
    return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  }

  it('prints the usage and exits 0 for --help or no command, without touching the database', async () => {
    const before = opened;
    for (const argv of [[], ['--help'], ['-h'], ['org', 'list', '--help']]) {
      const result = await cli(...argv);
      expect(result).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    }
    expect(opened).toBe(before);
  });

  it('prints the result as JSON on stdout and exits 0', async () => {
    const created = await cli('org', 'create', '--name', 'Printed', '--timezone', 'Europe/Paris', '--groups', 'platform,lookup');
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    const org = JSON.parse(created.stdout) as OrgJson;
    expect(org).toMatchObject({ name: 'Printed', timezone: 'Europe/Paris', plan: { groups: ['platform', 'lookup'] } });

    const key = await cli('key', 'generate', org.id, '--name=ci');
    expect(key.code).toBe(0);
    const printed = JSON.parse(key.stdout) as KeyJson & { key: string };
    expect(printed.key).toMatch(KEY);
    expect(printed.is_default).toBe(true);
    const listed = await cli('key', 'list', org.id);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(printed.key);
  });

  it('exits 2 with the usage text for an unknown command, a missing argument or an unknown flag', async () => {
    const unknown = await cli('org', 'frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(`Unknown command "org frobnicate".\n\n${USAGE}`);

    const missing = await cli('member', 'list');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`Missing ORG_ID.\n\n${USAGE}`);

    const notANumber = await cli('org', 'create', '--name', 'N', '--rps', 'fast');
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toBe(`--rps takes a whole number.\n\n${USAGE}`);

    for (const argv of [['org', 'create', '--nmae', 'Typo'], ['org', 'create', '--name'], ['org', 'list', '-x']]) {
      const result = await cli(...argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.endsWith(`\n\n${USAGE}`)).toBe(true);
      expect(result.stderr.length).toBeGreaterThan(USAGE.length + 2);
    }
  });

  it('prints validation errors as "param: message", one per line, and exits 1', async () => {
    const result = await cli('org', 'create', '--name', 'Bad', '--timezone', 'Mars/Base', '--groups', 'gold', '--rps', '0');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').sort()).toEqual([
      'plan.groups: "gold" is not a valid choice.',
      'plan.rate_limit_per_second: Ensure this value is greater than or equal to 1.',
      'timezone: "Mars/Base" is not a valid time zone. Use an IANA name such as "Europe/Berlin".',
    ]);
    const member = await cli('member', 'add', UNKNOWN_ID, '--email', 'nope');
    expect(member).toEqual({ code: 1, stdout: '', stderr: 'email: Enter a valid email address.' });
  });

  it('prints "not found" and conflicts and exits 1; the default key survives', async () => {
    expect(await cli('org', 'show', UNKNOWN_ID)).toEqual({ code: 1, stdout: '', stderr: 'Organization not found.' });

    const org = await run<OrgJson>(['org', 'create'], { name: 'Conflicted' });
    const key = await run<KeyJson & { key: string }>(['key', 'generate', org.id], { name: 'Only' });
    expect(await cli('key', 'delete', org.id, key.id)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'The default API key cannot be deleted. Make another key the default first.',
    });
    expect(await findPrincipalByKey(db, key.key)).not.toBeNull();
  });

  it('closes the database session it opened, whatever the outcome', async () => {
    expect(opened).toBeGreaterThan(0);
    expect(closed).toBe(opened);
  });
});

describe('operator CLI end to end', () => {
  it('runs as a process against the configured database schema', { timeout: 60_000 }, async () => {
    const marker = await run<OrgJson>(['org', 'create'], { name: `Spawned ${Date.now()}` });
    const expected = await run<OrgJson[]>(['org', 'list']);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@notify/source', 'apps/cli/src/main.ts', 'org', 'list'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL, DATABASE_SCHEMA: db.schema, REDIS_URL },
      timeout: 50_000,
    });
    // execFile rejects on a non-zero exit code, so getting here means exit 0.
    expect(stderr).toBe('');
    const listed = JSON.parse(stdout) as OrgJson[];
    expect(listed).toEqual(expected);
    expect(listed.map((org) => org.id)).toContain(marker.id);
  });
});
