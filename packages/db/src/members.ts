/**
 * An organization's team members: ordinary CRUD in Prisma (Prisma style). The one step Prisma
 * cannot express, a change of a member's settings with their row locked and their digests moved
 * to a new zone in the same transaction, is an sql/ operation called here
 * (sql/change-member-settings); so is the check that PostgreSQL knows a zone.
 */
import { Conflict, hasControlCharacter, isUuid, isValidEmail, isValidTimeZone, messages, normalizeEmail, NotFound, ValidationFailed, type FieldIssue } from '@notify/core';
import type { Database } from './client';
import { pgCode, PG } from './errors';
import { getOrganization } from './organizations';
import { changeMemberSettings } from './sql/change-member-settings';
import { zoneKnownToDatabase } from './sql/zone-known-to-database';

export interface TeamMember {
  id: string;
  organizationId: string;
  email: string;
  name: string | null;
  createdAt: Date;
  /** Since when the address bounces (its e-mails are suppressed), and the server's reply; null: it does not. */
  bouncingSince: Date | null;
  bounceReply: string | null;
  /** IANA zone of their digests and quiet hours; null: the organization's. */
  timezone: string | null;
  /** Quiet hours [start, end) in their zone; both null: none. */
  quietStartHour: number | null;
  quietEndHour: number | null;
  /** When their effective zone last changed; null: never. */
  zoneSince: Date | null;
}

/** Hours of the member's day (in their zone) when instant and hourly e-mails wait; wraps midnight when start > end. */
export interface QuietHours {
  startHour: number;
  endHour: number;
}

export interface MemberInput {
  email: string;
  name?: string | null;
  timezone?: string | null;
  quietHours?: QuietHours | null;
}

/** What an operator may change of a member; an absent field is kept. */
export interface MemberPatch {
  name?: string | null;
  timezone?: string | null;
  quietHours?: QuietHours | null;
}

function validName(input: string | null | undefined, issues: FieldIssue[]): string | null {
  const name = input?.trim() || null;
  if (name && (name.length > 255 || /[\r\n\0]/.test(name))) {
    issues.push({ param: 'name', details: [name.length > 255 ? messages.maxLength(255) : 'Line breaks are not allowed.'] });
  }
  return name;
}

function checkClock(input: { timezone?: string | null; quietHours?: QuietHours | null }, issues: FieldIssue[]): void {
  if (input.timezone !== undefined && input.timezone !== null && !isValidTimeZone(input.timezone)) {
    issues.push({ param: 'timezone', details: [messages.timezone(input.timezone)] });
  }
  const quiet = input.quietHours;
  if (quiet === undefined || quiet === null) return;
  for (const [param, hour] of [['quiet_hours.start_hour', quiet.startHour], ['quiet_hours.end_hour', quiet.endHour]] as const) {
    if (hour === undefined || hour === null) issues.push({ param, details: [messages.required] });
    else if (!Number.isInteger(hour)) issues.push({ param, details: [messages.integer] });
    else if (hour < 0) issues.push({ param, details: [messages.min(0)] });
    else if (hour > 23) issues.push({ param, details: [messages.max(23)] });
  }
  if (Number.isInteger(quiet.startHour) && quiet.startHour === quiet.endHour) {
    issues.push({ param: 'quiet_hours', details: ['start_hour and end_hour must differ: quiet hours are [start_hour, end_hour) in the member\'s time zone.'] });
  }
}

/** A zone luxon accepts but PostgreSQL's own tz database does not know would stop deliveries: refused up front. */
async function checkZoneKnown(db: Database, timezone: string | null | undefined): Promise<void> {
  if (typeof timezone === 'string' && !(await zoneKnownToDatabase(db, timezone))) {
    throw new ValidationFailed([{ param: 'timezone', details: [messages.timezone(timezone)] }]);
  }
}

const quietColumns = (quiet: QuietHours | null | undefined) =>
  quiet === undefined ? {} : { quietStartHour: quiet?.startHour ?? null, quietEndHour: quiet?.endHour ?? null };

export async function addMember(db: Database, organizationId: string, input: MemberInput): Promise<TeamMember> {
  const issues: FieldIssue[] = [];
  const email = normalizeEmail(input.email ?? '');
  if (!input.email) issues.push({ param: 'email', details: [messages.required] });
  // Spaces around an address are trimmed, but a line break or other control character is refused
  // rather than trimmed away: it is what a header injection looks like (test/faults/abuse-email.test.ts).
  else if (hasControlCharacter(input.email) || !isValidEmail(email)) issues.push({ param: 'email', details: [messages.email] });
  const name = validName(input.name, issues);
  checkClock(input, issues);
  if (issues.length) throw new ValidationFailed(issues);
  await checkZoneKnown(db, input.timezone);
  await getOrganization(db, organizationId);
  try {
    return await db.prisma.teamMember.create({ data: { organizationId, email, name, timezone: input.timezone ?? null, ...quietColumns(input.quietHours) } });
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation || (error as { code?: string }).code === 'P2002') {
      throw new Conflict('A member with this e-mail address already exists in the organization.');
    }
    throw error;
  }
}

/**
 * Changes a member's name, time zone or quiet hours. A change of their effective zone (their own,
 * or the organization's when they have none) moves what their digest rules owe them to the new
 * zone's current period, in the same transaction (moveMemberDigests): no period twice, none lost.
 */
export async function updateMember(db: Database, organizationId: string, memberId: string, patch: MemberPatch, now: Date): Promise<TeamMember> {
  const issues: FieldIssue[] = [];
  const name = patch.name === undefined ? undefined : validName(patch.name, issues);
  checkClock(patch, issues);
  if (issues.length) throw new ValidationFailed(issues);
  if (!isUuid(memberId) || !isUuid(organizationId)) throw new NotFound('Team member not found.');
  await checkZoneKnown(db, patch.timezone);
  const changed = await changeMemberSettings(db, organizationId, memberId, { name, timezone: patch.timezone, quietHours: patch.quietHours }, now);
  if (!changed) throw new NotFound('Team member not found.');
  return db.prisma.teamMember.findUniqueOrThrow({ where: { id: memberId } });
}

export async function listMembers(db: Database, organizationId: string): Promise<TeamMember[]> {
  await getOrganization(db, organizationId);
  return db.prisma.teamMember.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/** Removing a member removes them from every rule, so their e-mails stop. */
export async function removeMember(db: Database, organizationId: string, memberId: string): Promise<void> {
  const { count } = isUuid(memberId)
    ? await db.prisma.teamMember.deleteMany({ where: { id: memberId, organizationId } })
    : { count: 0 };
  if (count === 0) throw new NotFound('Team member not found.');
}

/** Clears a member's bouncing address (the mailbox works again): their e-mails are sent again. */
export async function clearBounce(db: Database, organizationId: string, memberId: string): Promise<TeamMember> {
  const { count } = isUuid(memberId)
    ? await db.prisma.teamMember.updateMany({ where: { id: memberId, organizationId }, data: { bouncingSince: null, bounceReply: null } })
    : { count: 0 };
  if (count === 0) throw new NotFound('Team member not found.');
  return db.prisma.teamMember.findUniqueOrThrow({ where: { id: memberId } });
}

/** The organization's members among `ids`, in the order of `ids`, and the ids that name none of them. */
export async function membersAmong(db: Database, organizationId: string, ids: readonly string[]): Promise<{ found: TeamMember[]; unknown: string[] }> {
  if (ids.length === 0) return { found: [], unknown: [] };
  const rows = await db.prisma.teamMember.findMany({ where: { organizationId, id: { in: [...ids] } } });
  const byId = new Map(rows.map((member) => [member.id, member]));
  return { found: ids.flatMap((id) => byId.get(id) ?? []), unknown: ids.filter((id) => !byId.has(id)) };
}

/** Checks that every id names a member of the organization; returns the unknown ones. */
export async function unknownMemberIds(db: Database, organizationId: string, ids: readonly string[]): Promise<string[]> {
  return (await membersAmong(db, organizationId, ids)).unknown;
}
