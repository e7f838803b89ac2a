import type { Severity } from '@notify/core';
import { effectiveZone, formatDateTime } from './format-date';
import { groupEvents } from './group-events';
import type { EventDetails } from '@notify/core';
import type { MailContent } from './mail-content';
import { maskEvent, maskText } from './mask-secrets';
import { httpUrl, multiLine, singleLine, truncate } from './sanitize';
import { countedEvents, countedScope, scopeLabel } from './scope-labels';
import { buildSubject, digestLabel } from './subject';

/** How many events one e-mail lists; the counts still cover all of them. */
export const MAX_LISTED_EVENTS = 200;
/** Rows of the digest's per-asset table. */
export const MAX_ASSET_ROWS = 50;
const MAX_DATA_ENTRIES = 20;
const MAX_TAGS = 20;

const SEVERITY_STYLE: Record<Severity | 'none', { label: string; color: string }> = {
  critical: { label: 'Critical', color: '#b91c1c' },
  high: { label: 'High', color: '#c2410c' },
  medium: { label: 'Medium', color: '#a16207' },
  low: { label: 'Low', color: '#1d4ed8' },
  info: { label: 'Info', color: '#4b5563' },
  none: { label: 'No severity', color: '#6b7280' },
};

function severityStyle(severity: Severity | null): { label: string; color: string } {
  return severity !== null && Object.hasOwn(SEVERITY_STYLE, severity) ? SEVERITY_STYLE[severity] : SEVERITY_STYLE.none;
}

// The templates are logic-less: every key they test is always present (null or a value), so a
// missing key can never fall through to a same-named key of an enclosing section.
interface EventView {
  title: string;
  link: string | null;
  occurredAt: string;
  tags: string | null;
  summary: string | null;
  summaryText: string | null;
  data: { key: string; value: string }[] | null;
}

export interface MailView {
  subject: string;
  preheader: string;
  organizationName: string;
  ruleName: string;
  heading: string;
  kindLabel: string;
  scopeLabel: string;
  recipientName: string | null;
  periodText: string | null;
  /** How many repeats of recent findings were left out, when any were. */
  repeatsText: string | null;
  /** Says a test send is one (under the summary line). */
  testText: string | null;
  unsubscribeUrl: string | null;
  timeZone: string;
  totalText: string;
  assetsText: string;
  severityCounts: { label: string; count: number; color: string }[];
  assetCounts: { asset: string; count: number }[] | null;
  moreAssetsText: string | null;
  groups: {
    asset: string;
    assetType: string | null;
    countText: string;
    severities: { label: string; color: string; count: number; events: EventView[] }[];
  }[];
  moreText: string | null;
}

function dataValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // BigInt or a cycle: still say something rather than drop the row.
    return String(value);
  }
}

function eventView(shown: EventDetails, zone: string): EventView {
  // Secrets a finding carries (a leaked password, token, card number) never reach the e-mail.
  const event = maskEvent(shown, { tags: MAX_TAGS, data: MAX_DATA_ENTRIES });
  const tags = Array.isArray(event.tags)
    ? event.tags.slice(0, MAX_TAGS).map((tag) => singleLine(String(tag), 60)).filter(Boolean)
    : [];
  const summary = event.summary ? multiLine(event.summary, 2000) : '';
  const data = event.data ? event.data.map(([key, value]) => ({ key: singleLine(key, 60), value: singleLine(dataValue(value), 300) })) : [];
  return {
    title: singleLine(event.title, 300) || '(untitled event)',
    link: httpUrl(event.url),
    occurredAt: formatDateTime(event.occurredAt, zone),
    tags: tags.length > 0 ? tags.join(', ') : null,
    summary: summary || null,
    summaryText: summary ? summary.replace(/\n/g, '\n  ') : null,
    data: data.length > 0 ? data : null,
  };
}

/** The line inboxes show after the subject: the event itself, or what the counts add up to. */
function preheader(events: readonly EventDetails[], totals: string, severities: { label: string; count: number }[]): string {
  const only = events.length === 1 ? events[0] : undefined;
  if (only) return truncate(`${singleLine(only.asset, 100)}: ${singleLine(maskText(only.title), 150)}`, 200);
  const breakdown = severities.map((s) => `${s.count} ${s.label.toLowerCase()}`).join(', ');
  return breakdown ? `${totals} — ${breakdown}` : totals;
}

/** The recipient's name as the e-mail greets them, or null for no greeting. */
export function recipientName(name: string | null | undefined): string | null {
  return name ? singleLine(name, 100) || null : null;
}

export function buildView(content: MailContent): MailView {
  const zone = effectiveZone(content.timeZone);
  const grouped = groupEvents(content.events, MAX_LISTED_EVENTS);
  const isDigest = content.kind === 'digest';
  const label = scopeLabel(content.scope);
  const severityCounts = grouped.bySeverity.map(({ severity, count }) => ({ ...severityStyle(severity), count }));
  const totalText = countedEvents(grouped.total);
  const assetsText = `${grouped.assets.length} ${grouped.assets.length === 1 ? 'asset' : 'assets'}`;
  const omittedAssets = grouped.assets.length - MAX_ASSET_ROWS;

  return {
    subject: buildSubject(content),
    preheader: preheader(content.events, `${totalText} on ${assetsText}`, severityCounts),
    organizationName: singleLine(content.organizationName, 200) || 'Your organization',
    ruleName: singleLine(content.ruleName, 200) || '(unnamed rule)',
    heading: isDigest ? `${digestLabel(content.frequency)}: ${label}` : countedScope(content.scope, grouped.total),
    kindLabel: content.test ? 'Test e-mail' : isDigest ? digestLabel(content.frequency) : 'Instant alert',
    scopeLabel: label,
    recipientName: recipientName(content.recipient.name),
    periodText: content.period
      ? `${formatDateTime(content.period.start, zone)} to ${formatDateTime(content.period.end, zone)}`
      : null,
    testText: content.test
      ? 'This is a test e-mail of the rule, sent on request. It shows what the rule sends, and does not count as one of its deliveries.'
      : null,
    repeatsText: content.repeats
      ? `${content.repeats} ${content.repeats === 1 ? 'repeat' : 'repeats'} of findings already e-mailed lately left out.`
      : null,
    unsubscribeUrl: content.unsubscribeUrl ?? null,
    timeZone: zone,
    totalText,
    assetsText,
    severityCounts,
    assetCounts: isDigest && grouped.assets.length > 0
      ? grouped.assets.slice(0, MAX_ASSET_ROWS).map(({ asset, count }) => ({ asset: singleLine(asset, 300), count }))
      : null,
    moreAssetsText: isDigest && omittedAssets > 0 ? `… and ${omittedAssets} more ${omittedAssets === 1 ? 'asset' : 'assets'}` : null,
    groups: grouped.groups.map((group) => ({
      asset: singleLine(group.asset, 300) || '(no asset)',
      assetType: group.assetType ? singleLine(group.assetType, 60) || null : null,
      countText: countedEvents(group.count),
      severities: group.severities.map((bucket) => ({
        ...severityStyle(bucket.severity),
        count: bucket.count,
        events: bucket.events.map((event) => eventView(event, zone)),
      })),
    })),
    moreText: grouped.omitted > 0 ? `… and ${grouped.omitted} more ${grouped.omitted === 1 ? 'event' : 'events'} not listed here` : null,
  };
}
