import { clientOf, named, type Transaction } from '../client';

export interface NewMatch {
  ruleId: string;
  organizationId: string;
  eventId: string;
  /** The event's received_at: a match is stored in its event's month. */
  eventReceivedAt: Date;
  periodKey: string;
  dueAt: Date;
  /** Default pending; silenced: held back by `silenceId`; repeat: a finding the rule took as news lately. Neither is delivered. */
  status?: 'pending' | 'silenced' | 'repeat';
  silenceId?: string;
  /** Whom it is for: '' (default) every member of the rule; a time zone: a digest rule's members in it. */
  audience?: string;
}

/**
 * Records matches as pending (or silenced), made at `now`, one statement for any number. A (rule, event, audience)
 * recorded before is left as it is; returns the matches this call recorded.
 */
export async function recordMatches(tx: Transaction, matches: readonly NewMatch[], now: Date): Promise<NewMatch[]> {
  if (!matches.length) return [];
  const { rows } = await clientOf(tx).query<{
    rule_id: string; organization_id: string; event_id: string; event_received_at: Date; period_key: string; due_at: Date;
    status: 'pending' | 'silenced' | 'repeat'; silence_id: string | null; audience: string;
  }>(named('record-matches',
    `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, silence_id, audience, created_at)
     SELECT *, $10::timestamptz FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[], $7::match_status[], $8::uuid[], $9::text[])
     ON CONFLICT (rule_id, organization_id, event_id, event_received_at, audience) DO NOTHING
     RETURNING rule_id, organization_id, event_id, event_received_at, period_key, due_at, status, silence_id, audience`,
    [
      matches.map((m) => m.ruleId),
      matches.map((m) => m.organizationId),
      matches.map((m) => m.eventId),
      matches.map((m) => m.eventReceivedAt),
      matches.map((m) => m.periodKey),
      matches.map((m) => m.dueAt),
      matches.map((m) => m.status ?? 'pending'),
      matches.map((m) => m.silenceId ?? null),
      matches.map((m) => m.audience ?? ''),
      now,
    ],
  ));
  return rows.map((row) => ({
    ruleId: row.rule_id, organizationId: row.organization_id, eventId: row.event_id, eventReceivedAt: row.event_received_at,
    periodKey: row.period_key, dueAt: row.due_at, status: row.status, audience: row.audience, ...(row.silence_id ? { silenceId: row.silence_id } : {}),
  }));
}
