import { findingKey, periodKeys, type MatchableEvent } from '@notify/core';
import { countSilenced, lockUnmatchedEvents, noticeFindings, openCoalescingWindows, recordMatches, withTransaction, type ClaimedDelivery, type Finding, type NewMatch, type Transaction, type UnmatchedEvent } from '@notify/db';
import { Batcher } from '../batcher';
import type { PipelineResources } from '../resources';
import type { IndexedRule, RuleIndex } from '../rules/rule-index';
import type { ToSend } from '../hand-offs/to-send';
import { PeriodCache } from './period-cache';

interface Candidate {
  rule: IndexedRule;
  event: UnmatchedEvent;
  /** The active silence that holds this match back. */
  silenceId?: string;
}

export interface MatchResult {
  events: number;
  matches: number;
  /** Matches held back by silences (recorded, never e-mailed). */
  silenced: number;
  /** Deliveries made at once for instant rules' first matches. */
  immediate: number;
}

/**
 * The candidates that are news: every match of a rule without renotify_after_hours, and, for the
 * others, the first match of each finding in this batch if the rule takes it as news now.
 */
async function takeNews(tx: Transaction, candidates: readonly Candidate[], now: Date): Promise<Set<Candidate>> {
  const news = new Set<Candidate>();
  const firstOf = new Map<string, Candidate>();
  const findings: Finding[] = [];
  // An event matched by several rules is hashed once.
  const findingKeys = new Map<UnmatchedEvent, string>();
  for (const candidate of candidates) {
    if (candidate.rule.renotifyAfterHours === null) {
      news.add(candidate);
      continue;
    }
    let finding = findingKeys.get(candidate.event);
    if (finding === undefined) {
      finding = findingKey(candidate.event);
      findingKeys.set(candidate.event, finding);
    }
    const key = `${candidate.rule.id}|${finding}`;
    if (firstOf.has(key)) continue;
    firstOf.set(key, candidate);
    findings.push({ ruleId: candidate.rule.id, findingKey: finding });
  }
  if (!findings.length) return news;
  const taken = await noticeFindings(tx, findings, now);
  let i = 0;
  for (const candidate of firstOf.values()) if (taken[i++]) news.add(candidate);
  return news;
}

/**
 * A digest rule's match, once per time zone of its members (`memberZones`), each in the period
 * that contains `now` in that zone: each member's digest comes at their own delivery hour.
 */
function digestMatches(periods: PeriodCache, rule: IndexedRule, event: UnmatchedEvent, now: Date, status: 'pending' | 'repeat'): NewMatch[] {
  return rule.memberZones.map((zone) => {
    const period = periods.containing(rule, now, zone);
    return {
      ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, eventReceivedAt: event.received_at,
      periodKey: period.key, dueAt: status === 'pending' ? period.dueAt : now, status, audience: zone,
    };
  });
}

function toMatchable(event: UnmatchedEvent): MatchableEvent {
  return { scope: event.scope, asset: event.asset, asset_type: event.asset_type, severity: event.severity, tags: event.tags, data: event.data };
}

/** What a match transaction recorded, for what follows its commit (finishMatch). */
interface MatchedInTransaction {
  created: NewMatch[];
  silenced: number;
  deliveryIds: string[];
  claimed: ClaimedDelivery[];
  eventCount: number;
  rulesById: Map<string, IndexedRule>;
}

/** The most events one shared match transaction takes (a job's own batch of up to 1,000 goes whole). */
const MATCH_BATCH_EVENTS = 500;

export interface MatchStageOptions {
  index: RuleIndex;
  /** How long an instant rule's burst gathers after its first match (INSTANT_COALESCE_MS). */
  instantCoalesceMs: number;
  /** Where the deliveries of instant rules' first matches go. */
  toSend: ToSend;
  /** Match transactions running at once, shared by the match jobs of all scopes and the events handed here (default 2). */
  transactions?: number;
}

/**
 * The match stage: evaluates stored events against the rule index and records their matches. It
 * owns the periods it has reckoned (a period stays right until it ends, whichever job asks) and the
 * transactions its callers share: the match jobs a process runs at once, and the events ingest
 * hands it, go together in the next transaction while one runs (Batcher), so a burst of small jobs
 * costs a few commits rather than one each.
 */
export class MatchStage {
  readonly index: RuleIndex;
  private readonly periods = new PeriodCache();
  private readonly batches: Batcher<ReadonlyArray<readonly [string, string]>, MatchResult>;

  constructor(private readonly resources: PipelineResources, private readonly options: MatchStageOptions) {
    this.index = options.index;
    this.batches = new Batcher(
      async (calls) => {
        const result = await this.matchPairs(calls.flat());
        return calls.map(() => result);
      },
      { maxBatch: MATCH_BATCH_EVENTS, concurrency: options.transactions ?? 2, weight: (events) => events.length },
    );
  }

  /** The clock matching reads. */
  now(): Date {
    return this.resources.now();
  }

  /**
   * Matches stored events ([organization, event] pairs), in a transaction shared with the calls of
   * the moment: each answers with the result of the transaction it was in.
   */
  match(pairs: ReadonlyArray<readonly [string, string]>): Promise<MatchResult> {
    return this.batches.submit(pairs);
  }

  /**
   * Evaluates `events`, which the transaction `tx` holds (locked unmatched, or stored by it), and
   * records their matches: a statement that records the matches, marks the events matched (unless
   * `marked`: stored matched) and delivers instant rules' first matches, and, only when needed, one
   * each to notice findings, open coalescing windows (which locks the instant rules' rows) and count
   * silenced matches.
   */
  private async matchInTransaction(tx: Transaction, events: UnmatchedEvent[], now: Date, marked: boolean): Promise<MatchedInTransaction> {
    const rulesById = new Map<string, IndexedRule>();
    const all: Candidate[] = await this.index.matchAll(events, toMatchable, now);
    for (const { rule } of all) rulesById.set(rule.id, rule);

    const matches: NewMatch[] = [];
    // Silenced matches are recorded as such, never e-mailed, and open no instant window.
    const candidates: Candidate[] = [];
    for (const candidate of all) {
      const { rule, event, silenceId } = candidate;
      if (!silenceId) {
        candidates.push(candidate);
        continue;
      }
      matches.push({
        ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, eventReceivedAt: event.received_at,
        periodKey: periodKeys.silenced(), dueAt: now, status: 'silenced', silenceId,
      });
    }
    // One e-mail per finding: a rule with renotify_after_hours takes a finding as news once per
    // that many hours; the other matches of it are recorded as repeats (in their digest period,
    // whose e-mail counts them), never e-mailed, and open no instant window.
    const news = await takeNews(tx, candidates, now);
    const fresh: Candidate[] = [];
    for (const candidate of candidates) {
      if (news.has(candidate)) {
        fresh.push(candidate);
        continue;
      }
      const { rule, event } = candidate;
      if (rule.frequency === 'instant') {
        matches.push({ ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, eventReceivedAt: event.received_at, periodKey: periodKeys.repeat(), dueAt: now, status: 'repeat' });
      } else if (rule.frequency === 'hourly') {
        const periodKey = this.periods.containing(rule, now).key;
        matches.push({ ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, eventReceivedAt: event.received_at, periodKey, dueAt: now, status: 'repeat' });
      } else {
        matches.push(...digestMatches(this.periods, rule, event, now, 'repeat'));
      }
    }
    const instant = fresh.filter((candidate) => candidate.rule.frequency === 'instant');
    for (const { rule, event } of fresh) {
      if (rule.frequency === 'instant') continue;
      if (rule.frequency !== 'hourly') {
        matches.push(...digestMatches(this.periods, rule, event, now, 'pending'));
        continue;
      }
      const period = this.periods.containing(rule, now);
      matches.push({ ruleId: rule.id, organizationId: event.organization_id, eventId: event.id, eventReceivedAt: event.received_at, periodKey: period.key, dueAt: period.dueAt });
    }
    if (instant.length) {
      // Opens a coalescing window on every quiet rule, atomically, so two match jobs
      // agree on which match is "first" and which join the burst.
      const ruleIds = [...new Set(instant.map((candidate) => candidate.rule.id))];
      const windows = await openCoalescingWindows(tx, ruleIds, now, new Date(now.getTime() + this.options.instantCoalesceMs));
      const byRule = new Map(windows.map((window) => [window.id, window]));
      const firstTaken = new Set<string>();
      for (const { rule, event } of instant) {
        const window = byRule.get(rule.id);
        if (!window) continue;
        const immediate = window.opened && !firstTaken.has(rule.id);
        if (immediate) firstTaken.add(rule.id);
        matches.push({
          ruleId: rule.id,
          organizationId: event.organization_id,
          eventId: event.id,
          eventReceivedAt: event.received_at,
          periodKey: immediate ? periodKeys.instant(now) : periodKeys.burst(window.burst_until),
          dueAt: immediate ? now : window.burst_until,
          // The first match goes out now, delivered by the statement that records it, rather
          // than at the schedule stage's next tick.
          deliverNow: immediate,
        });
      }
    }

    // Instant alerts this process sends are made claimed for its send stage: no claim statement of
    // their own (ToSend.claims says how many).
    const { matches: recorded, deliveryIds, claimed } = await recordMatches(tx, marked ? [] : events, matches, now, this.options.toSend.claims());
    const created = recorded.filter((m) => m.status === 'pending');
    const silenced = recorded.filter((m) => m.status === 'silenced').length;
    // Counted from what this transaction recorded: a retried job counts nothing twice.
    if (silenced) {
      const counts = new Map<string, number>();
      for (const m of recorded) if (m.silenceId) counts.set(m.silenceId, (counts.get(m.silenceId) ?? 0) + 1);
      await countSilenced(tx, counts);
    }
    return { created, silenced, deliveryIds, claimed, eventCount: events.length, rulesById };
  }

  /** After a match transaction's commit: its metrics, and its deliveries to send. */
  private async finishMatch({ created, silenced, deliveryIds, claimed, eventCount, rulesById }: MatchedInTransaction): Promise<MatchResult> {
    const { metrics } = this.resources;
    if (metrics && created.length) {
      const counts = new Map<string, { scope: string; frequency: string; count: number }>();
      // A digest match recorded once per member time zone counts once.
      for (const match of new Map(created.map((m) => [`${m.ruleId}|${m.organizationId}|${m.eventId}`, m])).values()) {
        const rule = rulesById.get(match.ruleId);
        if (!rule) continue;
        const key = `${rule.scope}|${rule.frequency}`;
        const entry = counts.get(key) ?? { scope: rule.scope, frequency: rule.frequency, count: 0 };
        entry.count += 1;
        counts.set(key, entry);
      }
      for (const { scope, frequency, count } of counts.values()) metrics.matched(scope, frequency, count);
    }

    // Should this fail, the deliveries wait in PostgreSQL: the reconciler asks again.
    await this.options.toSend.hand(deliveryIds, claimed);
    if (silenced) metrics?.silenced(silenced);
    const matched = new Set(created.map((m) => `${m.ruleId}|${m.organizationId}|${m.eventId}`)).size;
    return { events: eventCount, matches: matched, silenced, immediate: deliveryIds.length };
  }

  /**
   * Evaluates stored events against the rule index and records the matches, set-based, in one
   * transaction: a statement that reads and locks the events, then matchInTransaction's. Events
   * already matched are skipped, so a retried or duplicated job does nothing twice.
   */
  private async matchPairs(pairs: ReadonlyArray<readonly [string, string]>): Promise<MatchResult> {
    if (!pairs.length) return { events: 0, matches: 0, silenced: 0, immediate: 0 };
    const now = this.resources.now();
    // Kept plans (genericPlans): the statements find their rows by ids and keys, and planning them
    // afresh (PostgreSQL's choice for a call of one or two events, their arrays of one looking
    // cheaper than a kept plan's estimate of ten) cost more than running them.
    const matched = await withTransaction(this.resources.db, async (tx) => {
      // Row locks keep two match jobs that got the same events from matching them twice.
      const events = await lockUnmatchedEvents(tx, pairs);
      return this.matchInTransaction(tx, events, now, false);
    }, { genericPlans: true });
    return this.finishMatch(matched);
  }

  /**
   * Matches events that the transaction `tx` has just stored, marked matched at `now`
   * (storeEventsToMatch), as `match` would, in that transaction: for the events of
   * single-event requests, it saves reading and locking them again, writing each event's row a
   * second time to mark it, and a transaction. Answers what is left once the transaction commits
   * (the metrics, and sending its deliveries); a failure rolls the events back with it.
   */
  async matchStored(tx: Transaction, events: UnmatchedEvent[], now: Date): Promise<() => Promise<MatchResult>> {
    const matched = await this.matchInTransaction(tx, events, now, true);
    return () => this.finishMatch(matched);
  }
}
