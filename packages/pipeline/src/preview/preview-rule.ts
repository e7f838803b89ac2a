import { compileFilters, findingIdentity, type Filters, type Frequency, type Scope } from '@notify/core';
import { readEventDetails, type DatabaseHandle } from '@notify/db';
import { createMailRenderer, type MailRenderer, type RenderedMail } from '@notify/mail';
import { EVENTS_PER_MAIL } from '../send/send-stage';
import { mailEventOf } from '../send/mail-event';
import { scanScopeEvents, strategyColumns } from '../stored-events/scan-scope-events';
import { replayMatches } from './replay';

/** A rule as created (validated and with the create defaults), not stored. */
export interface PreviewedRule {
  name: string;
  scope: Scope;
  strategy: Filters | null;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  renotifyAfterHours: number | null;
  members: ReadonlyArray<{ id: string; email: string; name: string | null }>;
}

/**
 * A preview reads its range as this many slices of time at once. PostgreSQL's part is reading the
 * scope's events from the heap, one page each (the events of a scope are spread among the others),
 * and ours is parsing and judging them: with two slices both cores work, for the same CPU; four
 * slices did no better than two (the preview part of `npm run bench:pipeline`).
 */
export const PREVIEW_SLICES = 2;

export interface RulePreview {
  from: Date;
  to: Date;
  matchedEvents: number;
  /** Matches of findings it would have e-mailed lately (renotify_after_hours), left out of e-mails. */
  repeats: number;
  /** E-mails per member (every member gets each one). */
  emails: number;
  /** The last e-mail it would have sent, as its first member would have got it. */
  sample: RenderedMail | null;
}

export interface PreviewContext {
  db: DatabaseHandle;
  instantCoalesceMs: number;
  now: () => Date;
  /** The sample's renderer (lazyMailRenderer: the API's processes send no e-mail otherwise). */
  renderer: () => Promise<MailRenderer>;
}

/** A renderer whose templates are compiled on its first use, once. */
export function lazyMailRenderer(): () => Promise<MailRenderer> {
  let renderer: Promise<MailRenderer> | undefined;
  return () => (renderer ??= createMailRenderer());
}

/**
 * Replays an organization's stored events of the last `days` through a rule that is not stored:
 * its strategy on every event of its scope (one index range, read a page at a time, only what the
 * strategy reads, PREVIEW_SLICES of time at once), then its frequency (and renotify window) on the
 * matches, as the pipeline would have delivered them. Nothing is stored or sent.
 */
export async function previewRule(
  ctx: PreviewContext,
  organization: { id: string; name: string; timezone: string },
  rule: PreviewedRule,
  days: number,
): Promise<RulePreview> {
  const to = ctx.now();
  const from = new Date(to.getTime() - days * 86_400_000);
  const matches = compileFilters(rule.strategy);
  const span = (to.getTime() - from.getTime()) / PREVIEW_SLICES;
  // With a renotify window, each match's finding by number: its identity's text is kept once a
  // finding rather than once a match, and the matches are held in columns rather than as an
  // object each, which holds a fraction of the memory over a million matches.
  const renotify = rule.renotifyAfterHours !== null;
  const columns = strategyColumns(rule.strategy, renotify);
  const findingNumbers = new Map<string, number>();
  const findingNumber = (identity: string): number => {
    let number = findingNumbers.get(identity);
    if (number === undefined) findingNumbers.set(identity, (number = findingNumbers.size));
    return number;
  };
  // The slices are read at once, each on a connection of its own, oldest first in the list.
  const perSlice = await Promise.all(Array.from({ length: PREVIEW_SLICES }, async (_, k) => {
    const range = { from: new Date(from.getTime() + k * span), to: k === PREVIEW_SLICES - 1 ? to : new Date(from.getTime() + (k + 1) * span) };
    const at: number[] = [];
    const ids: string[] = [];
    const findings: number[] | null = renotify ? [] : null;
    await scanScopeEvents(ctx.db, organization.id, rule.scope, range, (event) => {
      if (matches(event)) {
        at.push(event.received_ms);
        ids.push(event.id);
        findings?.push(findingNumber(findingIdentity({ scope: rule.scope, asset: event.asset, title: event.title, fingerprint: event.fingerprint })));
      }
      return true;
    }, { columns });
    // Read newest first; the pipeline saw them oldest first.
    return { at: at.reverse(), ids: ids.reverse(), findings: findings?.reverse() ?? null };
  }));
  const at = perSlice.flatMap((slice) => slice.at);
  const ids = perSlice.flatMap((slice) => slice.ids);
  const findings = renotify ? perSlice.flatMap((slice) => slice.findings!) : null;
  const schedule = { frequency: rule.frequency, deliveryHour: rule.deliveryHour, deliveryDayOfWeek: rule.deliveryDayOfWeek, timeZone: organization.timezone };
  const replay = replayMatches({ at, findings }, { schedule, renotifyAfterHours: rule.renotifyAfterHours }, ctx.instantCoalesceMs, EVENTS_PER_MAIL);

  let sample: RenderedMail | null = null;
  const recipient = rule.members[0];
  if (replay.last && recipient) {
    const shown = [...replay.last.indexes].reverse().map((index) => ({ id: ids[index]!, receivedAt: new Date(at[index]!) }));
    const events = await readEventDetails(ctx.db, organization.id, shown);
    const period = replay.last.period;
    sample = (await ctx.renderer()).render({
      organizationName: organization.name,
      ruleName: rule.name,
      scope: rule.scope,
      kind: rule.frequency === 'instant' ? 'instant' : 'digest',
      frequency: rule.frequency,
      ...(period ? { period: { start: period.start, end: period.end } } : {}),
      timeZone: organization.timezone,
      recipient: { email: recipient.email, name: recipient.name },
      events: events.map(mailEventOf),
    });
  }
  return { from, to, matchedEvents: at.length, repeats: replay.repeats, emails: replay.emails, sample };
}
