import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect } from 'vitest';
import type { ReceivedMail } from '@notify/mail/testing';
import { revision } from '../../../bench/support/results';
import { startTestApp, type TestOrg } from '../../support/app';
import type { createTestDatabase } from '../../support/database';
import { pause, pipelineBacklog } from '../../support/wait';

/**
 * The known stream every delivery fault scenario sends, and the count it ends with.
 *
 * One organization with `members` members and `rules` instant rules; rule k watches asset
 * host-k and goes to two members (k and k+1), so each event is two (recipient, event) pairs.
 * Events are spread over the rules; bursts on one rule coalesce into one e-mail, which is why
 * the count is by (recipient, event) pair, read from the e-mails themselves, not by e-mail.
 */

export const LONG = process.env.FAULTS_SCALE === 'long';
/** The short figure for `npm test`, the long one for `npm run test:faults`. */
export const scale = <T>(short: T, long: T): T => (LONG ? long : short);

type Db = Awaited<ReturnType<typeof createTestDatabase>>;

export interface StreamEvent {
  id: string;
  organization_id: string;
  scope: 'new_open_port_detected';
  occurred_at: string;
  asset: string;
  title: string;
}

export interface StreamSetup {
  org: TestOrg;
  events: StreamEvent[];
  /** The recipients of an event's e-mail. */
  recipientsOf(event: { asset: string }): string[];
}

export interface StreamOptions {
  events: number;
  rules?: number;
  members?: number;
  /** Names the events (`<tag>-<i>`), so a scenario's e-mails are its own. */
  tag: string;
  timezone?: string;
  /** Rule k's delivery settings (frequency, delivery_hour, …); instant when not given. */
  schedule?: (k: number) => Record<string, unknown>;
}

export async function prepareStream(db: Db, options: StreamOptions): Promise<StreamSetup> {
  const rules = options.rules ?? 20;
  const t = await startTestApp({}, { db });
  let org: TestOrg;
  try {
    org = await t.createOrg({ memberCount: options.members ?? 10, name: `Faults ${options.tag}`, timezone: options.timezone });
    for (let k = 0; k < rules; k++) {
      const response = await t.api(org.key, 'POST', '/v1/platform/notification-rules', {
        name: `host ${k}`,
        scope: 'new_open_port_detected',
        strategy: { must: [{ name: 'asset', type: 'eq', value: `host-${k}.example.com` }] },
        members: [org.members[k % org.members.length]!.team_member_uuid, org.members[(k + 1) % org.members.length]!.team_member_uuid],
        ...options.schedule?.(k),
      });
      if (response.statusCode !== 201) throw new Error(response.body);
    }
  } finally {
    await t.close();
  }
  const events = Array.from({ length: options.events }, (_, i): StreamEvent => ({
    id: `${options.tag}-${i}`,
    organization_id: org.id,
    scope: 'new_open_port_detected',
    occurred_at: new Date().toISOString(),
    asset: `host-${i % rules}.example.com`,
    title: `Finding ${options.tag}-${i} on host-${i % rules}`,
  }));
  const recipientsOf = (event: { asset: string }) => {
    const k = Number(/^host-(\d+)\./.exec(event.asset)![1]);
    return [org.members[k % org.members.length]!.email, org.members[(k + 1) % org.members.length]!.email];
  };
  return { org, events, recipientsOf };
}

export interface StreamResult {
  /** Event ids the API answered 202 for. */
  accepted: Set<string>;
  /** How many requests got each answer (status code, or the network error's code). */
  outcomes: Record<string, number>;
}

/**
 * Sends `events` to `baseUrl()` in requests of `perRequest`, one every `intervalMs`, whatever
 * happens meanwhile; a request that fails is not retried (its events count as not accepted,
 * unless they were stored anyway). `baseUrl` is asked per request, so streams can alternate.
 */
export async function sendStream(
  baseUrl: (request: number) => string,
  token: string,
  events: StreamEvent[],
  options: { perRequest?: number; intervalMs?: number; onRequest?: (request: number) => Promise<void> | void } = {},
): Promise<StreamResult> {
  const perRequest = options.perRequest ?? 5;
  const accepted = new Set<string>();
  const outcomes: Record<string, number> = {};
  const pending: Array<Promise<void>> = [];
  for (let request = 0; request * perRequest < events.length; request++) {
    await options.onRequest?.(request);
    const batch = events.slice(request * perRequest, (request + 1) * perRequest);
    pending.push(
      fetch(`${baseUrl(request)}/v1/ingest/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events: batch }),
        signal: AbortSignal.timeout(30_000),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          outcomes[response.status] = (outcomes[response.status] ?? 0) + 1;
          if (response.status === 202) for (const event of batch) accepted.add(event.id);
        },
        (error: Error) => {
          const code = (error.cause as { code?: string } | undefined)?.code ?? error.name;
          outcomes[code] = (outcomes[code] ?? 0) + 1;
        },
      ),
    );
    await pause(options.intervalMs ?? 20);
  }
  await Promise.all(pending);
  return { accepted, outcomes };
}

/** Event ids stored in PostgreSQL: what must be delivered. */
export async function storedEvents(db: Db): Promise<Map<string, { asset: string }>> {
  const { rows } = await db.pool.query<{ id: string; asset: string }>('SELECT id, asset FROM events');
  return new Map(rows.map((row) => [row.id, { asset: row.asset }]));
}

export interface Tally {
  events: number;
  /** (recipient, event) pairs owed. */
  expected: number;
  delivered: number;
  missing: number;
  /** Pairs that arrived in two different e-mails (different Message-IDs). */
  duplicated: number;
  /** The same e-mail (same Message-ID) accepted again: a send cut off between the server's 250 and its record. */
  retransmitted: number;
  /** Pairs nobody owed. */
  unexpected: number;
  emails: number;
}

const EVENT_IN_MAIL = /Finding (\S+) on host-/g;

/** Counts the e-mails received against what the stored events owe. */
export function tally(setup: StreamSetup, stored: Map<string, { asset: string }>, received: ReceivedMail[]): Tally {
  const expected = new Set<string>();
  for (const [id, event] of stored) for (const to of setup.recipientsOf(event)) expected.add(`${to}|${id}`);
  const mailsByPair = new Map<string, Set<string>>();
  const copies = new Map<string, number>();
  for (const mail of received) {
    copies.set(mail.messageId, (copies.get(mail.messageId) ?? 0) + 1);
    if ((copies.get(mail.messageId) ?? 0) > 1) continue;
    const ids = new Set([...mail.text.matchAll(EVENT_IN_MAIL)].map((match) => match[1]!));
    for (const to of mail.to) {
      for (const id of ids) {
        const pair = `${to}|${id}`;
        const mails = mailsByPair.get(pair) ?? new Set<string>();
        mails.add(mail.messageId);
        mailsByPair.set(pair, mails);
      }
    }
  }
  const delivered = [...mailsByPair.keys()].filter((pair) => expected.has(pair)).length;
  return {
    events: stored.size,
    expected: expected.size,
    delivered,
    missing: expected.size - delivered,
    duplicated: [...mailsByPair.values()].filter((mails) => mails.size > 1).length,
    retransmitted: [...copies.values()].reduce((sum, count) => sum + count - 1, 0),
    unexpected: [...mailsByPair.keys()].filter((pair) => !expected.has(pair)).length,
    emails: copies.size,
  };
}

/**
 * Waits until every owed pair arrived and the database has nothing left to send (every event
 * matched, every delivery sent or given up on), so a late duplicate would have arrived too; or
 * until `timeoutMs`. The tally then says what is missing, duplicated or late.
 */
export async function settle(db: Db, count: () => Tally, timeoutMs: number): Promise<Tally> {
  const done = async () => {
    const backlog = await pipelineBacklog(db.pool);
    return count().missing === 0 && backlog.unmatchedEvents + backlog.instantMatchesPending + backlog.deliveriesUnsent === 0;
  };
  await expect.poll(done, { timeout: timeoutMs, interval: 100 }).toBe(true).catch(() => {});
  return count();
}

/**
 * Prints a scenario's figures and, with FAULTS_REPORT set, writes them into that JSON file under the
 * scenario's name (`{ date, scenarios: { <name>: figures } }`), replacing that scenario's earlier
 * entry and keeping the others': `npm run test:faults` removes the file first, so it holds its
 * latest run only (bench/README.md). The files run one at a time (--no-file-parallelism), so
 * nothing else writes the file meanwhile.
 */
export function report(scenario: string, figures: Tally & Record<string, unknown>): void {
  const line = { scenario, scale: LONG ? 'long' : 'short', at: new Date().toISOString(), ...figures };
  console.log(`[faults] ${JSON.stringify(line)}`);
  const file = process.env.FAULTS_REPORT;
  if (!file) return;
  let scenarios: Record<string, unknown> = {};
  try {
    const previous = JSON.parse(readFileSync(file, 'utf8')) as { scenarios?: Record<string, unknown> };
    if (previous.scenarios && typeof previous.scenarios === 'object') scenarios = previous.scenarios;
  } catch {
    // No report yet (or not one of these): this scenario starts it.
  }
  const { scenario: _name, ...entry } = line;
  scenarios[scenario] = { ...entry, ...revision() };
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ date: line.at, scenarios }, null, 2)}\n`);
  renameSync(tmp, file);
}
