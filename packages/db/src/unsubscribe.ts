/**
 * A member's subscription to a rule's e-mails (the unsubscribe link): a thin front over sql/ (sql
 * style). Both operations are one statement on the (rule, member) link, and the link's page reads
 * it with the names of three tables joined.
 */
import type { Database } from './client';
import { readSubscription } from './sql/read-subscription';
import { updateSubscription } from './sql/update-subscription';

/** What the unsubscribe page says of a (rule, member) link. */
export interface Subscription {
  ruleName: string;
  organizationName: string;
  email: string;
  subscribed: boolean;
}

/** The subscription a link names, or null when the member is no longer among the rule's members (or either is gone). */
export async function findSubscription(db: Database, ruleId: string, memberId: string): Promise<Subscription | null> {
  const row = await readSubscription(db, ruleId, memberId);
  return row ? { ruleName: row.rule_name, organizationName: row.organization_name, email: row.email, subscribed: row.subscribed } : null;
}

/** Opts a member out of (or back into) a rule's e-mails; idempotent. False when the link names no member of the rule. */
export async function setSubscribed(db: Database, ruleId: string, memberId: string, subscribed: boolean): Promise<boolean> {
  return updateSubscription(db, ruleId, memberId, subscribed);
}
