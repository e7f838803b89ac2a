/**
 * A rule's ordinary CRUD, in Prisma (Prisma style): reading one with its members, updating it with
 * its members in one transaction, deleting it. Creating rules and the list, the API's hot paths,
 * are single statements of sql/ (rule-hot-paths.ts).
 */
import { isUuid, messages, NotFound, prepareRuleChanges, ValidationFailed, type Filters, type Frequency, type RuleUpdateBody, type Scope } from '@notify/core';
import type { Prisma } from './generated/prisma/client';
import type { Database } from './client';
import { memberRaceToValidation } from './errors';
import { unknownMemberIds } from './members';

export interface RuleMember {
  teamMemberId: string;
  email: string;
  /** False once the member opted out through an e-mail's unsubscribe link. */
  subscribed: boolean;
}

export interface RuleSummary {
  id: string;
  name: string;
  scope: Scope;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  members: RuleMember[];
  enabled: boolean;
  /** A finding is e-mailed again only this many hours after it was last news; null: every match. */
  renotifyAfterHours: number | null;
  addedDate: Date;
  lastUpdateDate: Date;
}

export interface Rule extends RuleSummary {
  organizationId: string;
  strategy: Filters | null;
}

const ruleInclude = {
  members: { include: { teamMember: { select: { id: true, email: true } } } },
} satisfies Prisma.NotificationRuleInclude;

type RuleRow = Prisma.NotificationRuleGetPayload<{ include: typeof ruleInclude }>;

function toRule(row: RuleRow): Rule {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    scope: row.scope,
    strategy: (row.strategy ?? null) as Filters | null,
    frequency: row.frequency,
    deliveryHour: row.deliveryHour,
    deliveryDayOfWeek: row.deliveryDayOfWeek,
    members: row.members
      .map((link) => ({ teamMemberId: link.teamMember.id, email: link.teamMember.email, subscribed: link.unsubscribedAt === null }))
      .sort((a, b) => a.email.localeCompare(b.email)),
    enabled: row.enabled,
    renotifyAfterHours: row.renotifyAfterHours,
    addedDate: row.addedDate,
    lastUpdateDate: row.lastUpdateDate,
  };
}

async function assertMembers(db: Database, organizationId: string, memberIds: string[]): Promise<void> {
  const unknown = await unknownMemberIds(db, organizationId, memberIds);
  if (unknown.length) throw new ValidationFailed([{ param: 'members', details: unknown.map((id) => messages.unknownMember(id)) }]);
}

export async function getRule(db: Database, organizationId: string, ruleId: string): Promise<Rule> {
  // Another organization's rule and a malformed id are the same to the caller: not found.
  const row = isUuid(ruleId)
    ? await db.prisma.notificationRule.findFirst({ where: { id: ruleId, organizationId }, include: ruleInclude })
    : null;
  if (!row) throw new NotFound('Notification rule not found.');
  return toRule(row);
}

export async function updateRule(db: Database, organizationId: string, ruleId: string, body: RuleUpdateBody): Promise<Rule> {
  const current = await getRule(db, organizationId, ruleId);
  const changes = prepareRuleChanges(current, body);
  await assertMembers(db, organizationId, changes.memberIds);
  try {
    const row = await db.prisma.$transaction(async (tx) => {
      const { count } = await tx.notificationRule.updateMany({
        where: { id: ruleId, organizationId },
        data: {
          name: changes.name,
          frequency: changes.frequency,
          deliveryHour: changes.deliveryHour,
          deliveryDayOfWeek: changes.deliveryDayOfWeek,
          renotifyAfterHours: changes.renotifyAfterHours,
          enabled: changes.enabled,
          lastUpdateDate: new Date(),
        },
      });
      if (count === 0) throw new NotFound('Notification rule not found.');
      // A disabled rule sends nothing more: what was waiting for its next delivery is dropped.
      if (!changes.enabled) await tx.match.updateMany({ where: { ruleId, status: 'pending' }, data: { status: 'dropped' } });
      await tx.notificationRuleMember.deleteMany({ where: { ruleId, teamMemberId: { notIn: changes.memberIds } } });
      await tx.notificationRuleMember.createMany({
        data: changes.memberIds.map((teamMemberId) => ({ ruleId, teamMemberId })),
        skipDuplicates: true,
      });
      return tx.notificationRule.findUniqueOrThrow({ where: { id: ruleId }, include: ruleInclude });
    });
    return toRule(row);
  } catch (error) {
    return memberRaceToValidation(error);
  }
}

export async function deleteRule(db: Database, organizationId: string, ruleId: string): Promise<void> {
  const { count } = isUuid(ruleId)
    ? await db.prisma.notificationRule.deleteMany({ where: { id: ruleId, organizationId } })
    : { count: 0 };
  if (count === 0) throw new NotFound('Notification rule not found.');
}
