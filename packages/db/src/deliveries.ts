/**
 * Operators' reads of a rule's deliveries and matches, and the queue dashboard's retry of failed
 * deliveries: ordinary reads, counts and an update in Prisma (Prisma style). The pipeline's own
 * statements on deliveries are sql/ operations.
 */
import { DELIVERY_STATUSES, isUuid, NotFound, type DeliveryStatus } from '@notify/core';
import type { Database } from './client';

export interface DeliveryRecord {
  id: string;
  ruleId: string;
  teamMemberId: string | null;
  email: string;
  periodKey: string;
  status: DeliveryStatus;
  eventCount: number;
  attempts: number;
  messageId: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
}

/** A rule's most recent deliveries, newest first: what was sent, to whom, and what failed. */
export async function listRuleDeliveries(db: Database, ruleId: string, options: { limit?: number; status?: DeliveryRecord['status'] } = {}): Promise<DeliveryRecord[]> {
  const rule = isUuid(ruleId) ? await db.prisma.notificationRule.findUnique({ where: { id: ruleId }, select: { id: true } }) : null;
  if (!rule) throw new NotFound('Notification rule not found.');
  return db.prisma.delivery.findMany({
    where: { ruleId, ...(options.status && { status: options.status }) },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    take: Math.min(Math.max(options.limit ?? 50, 1), 500),
  });
}

/** A rule's matches waiting for delivery, and those silences held back (never e-mailed), for operators. */
export async function ruleMatchCounts(db: Database, ruleId: string): Promise<{ pending: number; silenced: number }> {
  const groups = await db.prisma.match.groupBy({ by: ['status'], where: { ruleId, status: { in: ['pending', 'silenced'] } }, _count: { _all: true } });
  const count = (status: string) => groups.find((group) => group.status === status)?._count._all ?? 0;
  return { pending: count('pending'), silenced: count('silenced') };
}


/** How many deliveries each rule has in each status, for the operator console's rule list. */
export async function deliveryCountsByRule(db: Database, ruleIds: readonly string[]): Promise<Map<string, Record<DeliveryStatus, number>>> {
  const counts = new Map<string, Record<DeliveryStatus, number>>();
  for (const id of ruleIds) counts.set(id, Object.fromEntries(DELIVERY_STATUSES.map((status) => [status, 0])) as Record<DeliveryStatus, number>);
  if (!ruleIds.length) return counts;
  const groups = await db.prisma.delivery.groupBy({ by: ['ruleId', 'status'], where: { ruleId: { in: [...ruleIds] } }, _count: { _all: true } });
  for (const group of groups) {
    const entry = counts.get(group.ruleId);
    if (entry) entry[group.status] = group._count._all;
  }
  return counts;
}

/**
 * Puts failed deliveries back to pending (the queue dashboard's "retry" of a failed send job),
 * so the send stage claims them again; deliveries in any other status are left alone. Returns how many changed.
 */
export async function reopenFailedDeliveries(db: Database, deliveryIds: readonly string[]): Promise<number> {
  const ids = deliveryIds.filter(isUuid);
  if (!ids.length) return 0;
  const { count } = await db.prisma.delivery.updateMany({
    where: { id: { in: ids }, status: 'failed' },
    data: { status: 'pending', lastError: null, updatedAt: new Date() },
  });
  return count;
}
