import { messages, periodKeys, ValidationFailed, type Filters, type Scope } from '@notify/core';
import { createTestDeliveries, readEventDetails, type DeliveryEvent, type TestDelivery } from '@notify/db';
import { scopeLabel } from '@notify/mail';
import type { PipelineResources } from '../resources';
import type { ToSend } from '../hand-offs/to-send';
import { findLatestMatch } from './latest-match';

/** The rule a test send is for, as the API read it (its organization's, checked). */
export interface TestSendRule {
  id: string;
  organizationId: string;
  scope: Scope;
  strategy: Filters | null;
  members: ReadonlyArray<{ teamMemberId: string; subscribed: boolean }>;
}

/** How far back a test send looks for the rule's latest matching event. */
export const TEST_SEND_LOOKBACK_DAYS = 90;

/** A clearly labelled event of the scope, for a rule that has matched nothing stored yet. */
export function sampleEvent(scope: Scope, at: Date): DeliveryEvent {
  return {
    id: 'sample',
    scope,
    occurred_at: at.toISOString(),
    asset: 'example.com',
    asset_type: 'domain',
    severity: 'info',
    tags: ['sample'],
    title: `Sample event: ${scopeLabel(scope)}`,
    summary: `A sample, not a real finding: no event stored in the last ${TEST_SEND_LOOKBACK_DAYS} days matches this rule yet, so the test shows this one in its place.`,
    url: null,
    data: null,
  };
}

/**
 * The members a test send goes to: those asked for, each a subscribed member of the rule, or by
 * default every subscribed member. Throws ValidationFailed (param `members`) otherwise.
 */
export function testSendRecipients(rule: TestSendRule, memberIds?: readonly string[]): string[] {
  const members = new Map(rule.members.map((member) => [member.teamMemberId, member]));
  const wanted = memberIds ? [...new Set(memberIds)] : rule.members.filter((member) => member.subscribed).map((member) => member.teamMemberId);
  const issues: string[] = [];
  for (const id of wanted) {
    const member = members.get(id);
    if (!member) issues.push(messages.notRuleMember(id));
    else if (!member.subscribed) issues.push(messages.unsubscribedMember(id));
  }
  if (issues.length) throw new ValidationFailed([{ param: 'members', details: issues }]);
  if (!wanted.length) throw new ValidationFailed([{ param: 'members', details: [messages.noSubscribedMembers] }]);
  return wanted;
}

/**
 * A test send: each recipient (chosen by testSendRecipients) gets one e-mail now, built from the
 * rule's latest matching stored event or a sample event of its scope. The deliveries have a test
 * period key of their own: no period of the rule's matches is touched, and the rule's next e-mails
 * go out as they would have.
 */
export async function sendTestEmails(ctx: Pick<PipelineResources, 'db' | 'now'> & { toSend: ToSend }, rule: TestSendRule, recipients: readonly string[]): Promise<TestDelivery[]> {
  const now = ctx.now();
  const from = new Date(now.getTime() - TEST_SEND_LOOKBACK_DAYS * 86_400_000);
  const latest = await findLatestMatch(ctx.db, rule, { from, to: new Date(now.getTime() + 1) });
  const [stored] = latest ? await readEventDetails(ctx.db, rule.organizationId, [{ id: latest.id, receivedAt: new Date(latest.received_ms) }]) : [];
  const event = stored ?? sampleEvent(rule.scope, now);
  const deliveries = await createTestDeliveries(ctx.db, rule.id, recipients, periodKeys.test(now), event);
  // Should this fail, the deliveries wait as pending: the reconciler asks again.
  await ctx.toSend.hand(deliveries.map((delivery) => delivery.id));
  return deliveries;
}
