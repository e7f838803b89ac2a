import type { EventDetails, Frequency, Scope } from '@notify/core';

export interface MailContent {
  organizationName: string;
  ruleName: string;
  scope: Scope;
  kind: 'instant' | 'digest';
  frequency: Frequency;
  period?: { start: Date; end: Date };
  /** IANA zone of the organization; dates in the e-mail are shown in it. */
  timeZone: string;
  recipient: { email: string; name?: string | null };
  /** Every match; the renderer caps how many it lists, the counts cover all. */
  events: EventDetails[];
  /** Matches of findings the rule e-mailed lately (renotify_after_hours), left out of this e-mail. */
  repeats?: number;
  /** A test send (the rule's `/test`): the subject starts `[Test]` and the e-mail says what it is. */
  test?: boolean;
  /** The page where the recipient opts out of this rule (the footer links to it). */
  unsubscribeUrl?: string;
}

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export interface MailRenderer {
  render(content: MailContent): RenderedMail;
}
