import { Conflict, hasControlCharacter, isUuid, isValidEmail, messages, normalizeEmail, NotFound, ValidationFailed, type FieldIssue } from '@notify/core';
import type { Database } from './client';
import { pgCode, PG } from './errors';
import { getOrganization } from './organizations';

export interface TeamMember {
  id: string;
  organizationId: string;
  email: string;
  name: string | null;
  createdAt: Date;
  /** Since when the address bounces (its e-mails are suppressed), and the server's reply; null: it does not. */
  bouncingSince: Date | null;
  bounceReply: string | null;
}

export interface MemberInput {
  email: string;
  name?: string | null;
}

export async function addMember(db: Database, organizationId: string, input: MemberInput): Promise<TeamMember> {
  const issues: FieldIssue[] = [];
  const email = normalizeEmail(input.email ?? '');
  if (!input.email) issues.push({ param: 'email', details: [messages.required] });
  // Spaces around an address are trimmed, but a line break or other control character is refused
  // rather than trimmed away: it is what a header injection looks like (test/faults/abuse-email.test.ts).
  else if (hasControlCharacter(input.email) || !isValidEmail(email)) issues.push({ param: 'email', details: [messages.email] });
  const name = input.name?.trim() || null;
  if (name && (name.length > 255 || /[\r\n\0]/.test(name))) {
    issues.push({ param: 'name', details: [name.length > 255 ? messages.maxLength(255) : 'Line breaks are not allowed.'] });
  }
  if (issues.length) throw new ValidationFailed(issues);
  await getOrganization(db, organizationId);
  try {
    return await db.prisma.teamMember.create({ data: { organizationId, email, name } });
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation || (error as { code?: string }).code === 'P2002') {
      throw new Conflict('A member with this e-mail address already exists in the organization.');
    }
    throw error;
  }
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
