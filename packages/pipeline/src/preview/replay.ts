import { periodContaining, type Period, type Schedule } from '@notify/core';

/**
 * The matches of a rule's strategy among stored events, in arrival order, by column: a preview
 * holds every match of its range at once, as numbers rather than an object and a finding's text
 * for each (see previewRule).
 */
export interface ReplayedMatches {
  /** When each arrived (ms). */
  at: readonly number[];
  /**
   * The finding each reports, as a number (the same for matches of the same finding: core's
   * findingIdentity, numbered from 0 as first seen, so each is below the number of matches), for
   * renotify_after_hours; null without it.
   */
  findings: readonly number[] | null;
}

/** What replaying matches through a rule's frequency gives: its e-mails, and the last one's matches. */
export interface Replay {
  emails: number;
  /** Matches of findings the rule would have e-mailed lately (renotify_after_hours): never e-mailed. */
  repeats: number;
  /**
   * The last e-mail: the indexes (into the matches given) of what it carries, the newest `keep`
   * of them in arrival order, and its period for a digest.
   */
  last: { indexes: number[]; period: Period | null } | null;
}

/**
 * Replays matches, oldest first, the way the pipeline delivers them: an instant rule sends its
 * first match after a quiet spell at once and the matches of the next `coalesceMs` as one burst;
 * a digest rule sends one e-mail per period that has a match. With `renotifyAfterHours`, a
 * finding is news once per that many hours; its other matches are repeats, never e-mailed.
 * Of the last e-mail's matches it keeps the newest `keep` (an e-mail shows that many at most).
 */
export function replayMatches(
  matches: ReplayedMatches,
  rule: { schedule: Schedule; renotifyAfterHours: number | null },
  coalesceMs: number,
  keep = Number.POSITIVE_INFINITY,
): Replay {
  const renotifyMs = rule.renotifyAfterHours === null || matches.findings === null ? null : rule.renotifyAfterHours * 3_600_000;
  const instant = rule.schedule.frequency === 'instant';
  /** When each finding was last news, by its number (-Infinity: never). */
  const newsAt = new Float64Array(renotifyMs === null ? 0 : matches.at.length).fill(Number.NEGATIVE_INFINITY);
  let emails = 0;
  let repeats = 0;
  let last: Replay['last'] = null;
  // Instant: the open window's end, and whether its burst e-mail is counted.
  let windowEnd = Number.NEGATIVE_INFINITY;
  let burst = false;
  // Digest: the period being filled.
  let period: Period | null = null;

  for (let index = 0; index < matches.at.length; index++) {
    const at = matches.at[index]!;
    if (renotifyMs !== null) {
      const finding = matches.findings![index]!;
      if (at - newsAt[finding]! < renotifyMs) {
        repeats++;
        continue;
      }
      newsAt[finding] = at;
    }
    let opens = false;
    if (instant) {
      if (at >= windowEnd) {
        windowEnd = at + coalesceMs;
        burst = false;
        opens = true;
      } else if (!burst) {
        burst = true;
        opens = true;
      }
    } else if (!period || at >= period.end.getTime()) {
      period = periodContaining(rule.schedule, new Date(at));
      opens = true;
    }
    if (opens) {
      emails++;
      last = { indexes: [index], period: instant ? null : period };
      continue;
    }
    // The first match always opens an e-mail, so there is one to join.
    const { indexes } = last!;
    indexes.push(index);
    // Trimmed once it holds twice what it keeps: a copy every `keep` matches.
    if (indexes.length >= 2 * keep) indexes.splice(0, indexes.length - keep);
  }
  if (last && last.indexes.length > keep) last.indexes.splice(0, last.indexes.length - keep);
  return { emails, repeats, last };
}
