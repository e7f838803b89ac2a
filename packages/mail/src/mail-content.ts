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

/** What a recipient's e-mail has of its own: the rest is the same for every recipient of the content. */
export interface MailRecipient {
  name?: string | null;
  /** The page where this recipient opts out of the rule (MailContent's unsubscribeUrl). */
  unsubscribeUrl?: string;
}

/** An e-mail rendered once for any number of recipients (MailRenderer.renderShared). */
export interface SharedMail {
  /** The e-mail of one recipient: their name and unsubscribe link filled in, nothing rendered again. */
  for(recipient: MailRecipient): RenderedMail;
}

export interface MailRenderer {
  render(content: MailContent): RenderedMail;
  /**
   * The e-mail of `content` for whichever recipient `for` is given (content's own recipient and
   * unsubscribe link are not read): the members of a digest get the same events in the same zone,
   * and rendering it once costs a fraction of rendering it for each.
   */
  renderShared(content: Omit<MailContent, 'recipient' | 'unsubscribeUrl'>): SharedMail;
}
