import type { FastPathName } from '@notify/config';

/**
 * The fast paths: where a process that runs two neighbouring stages hands work from one to the next
 * itself instead of through the queue between them. Each is a named option, on by default, and
 * each only applies when the process runs the next stage's role. Turned off, the work takes the
 * queue, as it would between two processes: the e-mails are the same (the end-to-end suite runs
 * both ways), only the cost differs. Nothing is lost either way: PostgreSQL holds the work before
 * it is handed on, and the reconciler asks again for what a killed process took and did not finish.
 * `FAST_PATHS` (packages/config) sets them: `all` (the default), `none`, or a comma list of names.
 */
export interface FastPaths {
  /**
   * ingest → match: events this process stores are matched here, in the transactions the match
   * jobs share, without a match job per scope and request. Trade-off: a job per small request cost
   * more of Redis and of our CPU than the matching; a full process (MATCH_HERE_MAX_EVENTS) declines
   * and the queue takes them, where a flood of one scope does not hold up the others.
   */
  matchInProcess: boolean;
  /**
   * ingest + match fused: a small batch (up to MATCH_IN_STORE_UP_TO events) is matched in the very
   * transaction that stores it, so no event row is written twice and there is a transaction less.
   * Trade-off: the request waits for its matching (bounded by MATCH_IN_STORE_LOCK_TIMEOUT_MS; past
   * it, or on any failure, the events are stored alone and matched as ever).
   */
  matchInStore: boolean;
  /**
   * schedule → deliver: due periods the schedule stage finds are delivered here, without a deliver
   * job each. Trade-off: a job per (rule, period) in a wave cost more than its delivery; the tick
   * waits for its page to be delivered before it looks for the next.
   */
  deliverInProcess: boolean;
  /**
   * match / deliver / flush / test send → send: deliveries this process makes are sent by its own
   * send stage, without a send job. Trade-off: a job's round trips came before an instant alert's
   * e-mail; what the first attempt cannot send (a transient failure, the server away, a shutdown)
   * goes to the send queue, which retries it.
   */
  sendInProcess: boolean;
  /**
   * deliver + send fused: the statement that makes deliveries also claims those this process's
   * sender has room for, so they need no claim statement of their own. Needs `sendInProcess`.
   * Trade-off: a claimed delivery the sender then declines is given back, a write more.
   */
  claimWhenMade: boolean;
}

/** The names are config's (FAST_PATH_NAMES, which FAST_PATHS is parsed against): this fails to compile when the two differ. */
type SameNames = [FastPathName] extends [keyof FastPaths] ? ([keyof FastPaths] extends [FastPathName] ? true : never) : never;
export const FAST_PATHS_MATCH_CONFIG: SameNames = true;

export const ALL_FAST_PATHS: Readonly<FastPaths> = { matchInProcess: true, matchInStore: true, deliverInProcess: true, sendInProcess: true, claimWhenMade: true };

export const NO_FAST_PATHS: Readonly<FastPaths> = { matchInProcess: false, matchInStore: false, deliverInProcess: false, sendInProcess: false, claimWhenMade: false };
