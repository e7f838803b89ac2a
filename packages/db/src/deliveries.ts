import { isUuid, NotFound } from '@notify/core';
import type { Database } from './client';

export interface DeliveryRecord {
  id: string;
  ruleId: string;
  teamMemberId: string | null;
  email: string;
  periodKey: string;
  status: 'pending' | 'sending' | 'sent' | 'failed' | 'cancelled';
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

/** Counts of a rule's matches waiting for delivery, for operators. */
export async function pendingMatchCount(db: Database, ruleId: string): Promise<number> {
  return db.prisma.match.count({ where: { ruleId, status: 'pending' } });
}
