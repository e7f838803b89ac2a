/**
 * A rule's delivery log, as its customer sees it: a thin front over sql/ (sql style). The page is
 * filtered and ordered by what a delivery's period key says of its kind, written in SQL
 * (sql/read-delivery-log-page); the front checks the rule is the organization's and maps rows.
 */
import { customerError, isUuid, NotFound, type DeliveryKind, type DeliveryLogQuery } from '@notify/core';
import type { Database } from './client';
import { isOrganizationRule } from './sql/is-organization-rule';
import { readDeliveryLogPage } from './sql/read-delivery-log-page';

/** One e-mail of a rule, as its customer sees it. */
export interface DeliveryLogItem {
  id: string;
  teamMemberId: string | null;
  email: string;
  kind: DeliveryKind;
  /** When its first event arrived (its period's start as far as the e-mail goes). */
  periodStart: Date;
  /** When its period closed and the e-mail was made. */
  periodEnd: Date;
  events: number;
  status: string;
  attempts: number;
  sentAt: Date | null;
  messageId: string | null;
  error: string | null;
}

/** A page of a rule's deliveries, newest first by default; another organization's rule is not found. */
export async function listDeliveryLog(db: Database, organizationId: string, ruleId: string, query: DeliveryLogQuery): Promise<{ total: number; items: DeliveryLogItem[] }> {
  if (!isUuid(ruleId) || !(await isOrganizationRule(db, organizationId, ruleId))) throw new NotFound('Notification rule not found.');
  const { total, rows } = await readDeliveryLogPage(db, ruleId, query);
  return {
    total,
    items: rows.map((row) => ({
      id: row.id,
      teamMemberId: row.team_member_id,
      email: row.email,
      kind: row.kind,
      periodStart: row.period_start,
      periodEnd: row.period_end,
      events: row.event_count,
      status: row.status,
      attempts: row.attempts,
      sentAt: row.sent_at,
      messageId: row.message_id,
      error: customerError(row.status, row.last_error),
    })),
  };
}
