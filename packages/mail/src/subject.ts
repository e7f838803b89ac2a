import type { Frequency } from '@notify/core';
import type { MailContent } from './mail-content';
import { maskText } from './mask-secrets';
import { singleLine, truncate } from './sanitize';
import { countedEvents, countedScope, scopeLabel } from './scope-labels';

export const MAX_SUBJECT_LENGTH = 200;

const DIGEST_LABELS: Record<Frequency, string> = {
  instant: 'Digest',
  hourly: 'Hourly digest',
  daily: 'Daily digest',
  weekly: 'Weekly digest',
  monthly: 'Monthly digest',
};

export function digestLabel(frequency: Frequency): string {
  return Object.hasOwn(DIGEST_LABELS, frequency) ? DIGEST_LABELS[frequency] : 'Digest';
}

/**
 * `[Acme] 3 new open ports detected`, `[Acme] 1 new open port detected: <title>`,
 * `[Acme] Daily digest: 42 events — New open port detected`; a test send's starts `[Test] `. Every interpolated value is made a
 * single line, so nothing from an event or a name can end the header.
 */
export function buildSubject(content: MailContent): string {
  const organization = singleLine(content.organizationName, 60) || 'Notify';
  const count = content.events.length;
  let body: string;
  if (content.kind === 'digest') {
    body = `${digestLabel(content.frequency)}: ${countedEvents(count)} — ${scopeLabel(content.scope)}`;
  } else {
    body = countedScope(content.scope, count);
    const only = count === 1 ? content.events[0] : undefined;
    const title = only ? singleLine(maskText(only.title), 120) : '';
    if (title) body += `: ${title}`;
  }
  return truncate(`${content.test ? '[Test] ' : ''}[${organization}] ${body}`, MAX_SUBJECT_LENGTH);
}
