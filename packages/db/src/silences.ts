/**
 * Notification silences: a thin front over sql/ operations (sql style). A silence's rows are read
 * and written by the same few columns (sql/includes/silence-columns), its create takes turns per
 * organization under a row lock that Prisma cannot take, and its status is reckoned in SQL against
 * the caller's clock; one style for all of them rather than Prisma for some.
 */
import { isUuid, LimitReached, messages, NotFound, SILENCE_LIMITS, ValidationFailed, type Filters, type NewSilence, type SilenceListQuery } from '@notify/core';
import { withTransaction, type Database } from './client';
import { countUnexpiredSilences } from './sql/count-unexpired-silences';
import { endSilence } from './sql/end-silence';
import { existingRuleIds } from './sql/existing-rule-ids';
import { findSilence } from './sql/find-silence';
import type { SilenceRow } from './sql/includes/silence-columns';
import { insertSilence } from './sql/insert-silence';
import { lockOrganization } from './sql/lock-organization';
import { readSilencePage } from './sql/read-silence-page';

/** A silence as the API shows it (its status follows from the clock: silenceStatus). */
export interface Silence {
  id: string;
  organizationId: string;
  filters: Filters;
  /** null: every rule of the organization. */
  ruleIds: string[] | null;
  startsAt: Date;
  endsAt: Date;
  comment: string;
  silencedCount: number;
  addedDate: Date;
  lastUpdateDate: Date;
}

function toSilence(row: SilenceRow): Silence {
  return {
    id: row.id,
    organizationId: row.organization_id,
    filters: row.filters,
    ruleIds: row.rule_ids?.length ? row.rule_ids : null,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    comment: row.comment,
    silencedCount: row.silenced_count,
    addedDate: row.added_date,
    lastUpdateDate: row.last_update_date,
  };
}

/**
 * Stores a silence of the organization. Its rule ids must all be the organization's (a 400 naming
 * the others), and the organization may hold at most SILENCE_LIMITS.maxUnexpiredPerOrganization
 * silences not yet expired (LimitReached). Creates of one organization take turns on its row.
 */
export async function createSilence(db: Database, organizationId: string, silence: NewSilence, now: Date): Promise<Silence> {
  return withTransaction(db, async (tx) => {
    await lockOrganization(tx, organizationId);
    if (silence.ruleIds) {
      const known = new Set(await existingRuleIds(tx, organizationId, silence.ruleIds));
      const unknown = silence.ruleIds.filter((id) => !known.has(id));
      if (unknown.length) throw new ValidationFailed([{ param: 'rule_ids', details: unknown.map((id) => messages.unknownMember(id)) }]);
    }
    if ((await countUnexpiredSilences(tx, organizationId, now)) >= SILENCE_LIMITS.maxUnexpiredPerOrganization) {
      throw new LimitReached(
        `This organization holds ${SILENCE_LIMITS.maxUnexpiredPerOrganization} silences that have not expired, the most it may. Delete (expire) those it no longer needs.`,
      );
    }
    return toSilence(await insertSilence(tx, organizationId, silence, now));
  });
}

/** A page of the organization's silences, latest first. */
export async function listSilences(db: Database, organizationId: string, query: SilenceListQuery, now: Date): Promise<{ total: number; silences: Silence[] }> {
  const { total, rows } = await readSilencePage(db, organizationId, query, now);
  return { total, silences: rows.map(toSilence) };
}

export async function getSilence(db: Database, organizationId: string, silenceId: string): Promise<Silence> {
  // Another organization's silence and a malformed id are the same to the caller: not found.
  const row = isUuid(silenceId) ? await findSilence(db, organizationId, silenceId) : null;
  if (!row) throw new NotFound('Notification silence not found.');
  return toSilence(row);
}

/** Ends a silence now (one that ended already stays as it was); it stays listed, as expired. */
export async function expireSilence(db: Database, organizationId: string, silenceId: string, now: Date): Promise<Silence> {
  await getSilence(db, organizationId, silenceId);
  const row = await endSilence(db, organizationId, silenceId, now);
  return row ? toSilence(row) : getSilence(db, organizationId, silenceId);
}
