import { periodContaining, type Period, type Schedule } from '@notify/core';

/** A stored event the rule's strategy matched, in arrival order. */
export interface ReplayedMatch {
  /** When it arrived (ms). */
  at: number;
  /** The finding it reports (core's findingIdentity), for renotify_after_hours. */
  finding: string;
}

/** What replaying matches through a rule's frequency gives: its e-mails, and the last one's matches. */
export interface Replay {
  emails: number;
  /** Matches of findings the rule would have e-mailed lately (renotify_after_hours): never e-mailed. */
  repeats: number;
  /** The last e-mail: the indexes (into the matches given) of what it carries, and its period for a digest. */
  last: { indexes: number[]; period: Period | null } | null;
}

/**
 * Replays matches, oldest first, the way the pipeline delivers them: an instant rule sends its
 * first match after a quiet spell at once and the matches of the next `coalesceMs` as one burst;
 * a digest rule sends one e-mail per period that has a match. With `renotifyAfterHours`, a
 * finding is news once per that many hours; its other matches are repeats, never e-mailed.
 */
export function replayMatches(
  matches: readonly ReplayedMatch[],
  rule: { schedule: Schedule; renotifyAfterHours: number | null },
  coalesceMs: number,
): Replay {
  const renotifyMs = rule.renotifyAfterHours === null ? null : rule.renotifyAfterHours * 3_600_000;
  const newsAt = new Map<string, number>();
  let emails = 0;
  let repeats = 0;
  let last: Replay['last'] = null;
  // Instant: the open window's end, and whether its burst e-mail is counted.
  let windowEnd = Number.NEGATIVE_INFINITY;
  let burst = false;
  // Digest: the period being filled.
  let period: Period | null = null;

  for (const [index, match] of matches.entries()) {
    if (renotifyMs !== null) {
      const previous = newsAt.get(match.finding);
      if (previous !== undefined && match.at - previous < renotifyMs) {
        repeats++;
        continue;
      }
      newsAt.set(match.finding, match.at);
    }
    if (rule.schedule.frequency === 'instant') {
      if (match.at >= windowEnd) {
        emails++;
        windowEnd = match.at + coalesceMs;
        burst = false;
        last = { indexes: [index], period: null };
      } else if (!burst) {
        emails++;
        burst = true;
        last = { indexes: [index], period: null };
      } else last!.indexes.push(index);
      continue;
    }
    if (!period || match.at >= period.end.getTime()) {
      period = periodContaining(rule.schedule, new Date(match.at));
      emails++;
      last = { indexes: [index], period };
    } else last!.indexes.push(index);
  }
  return { emails, repeats, last };
}
