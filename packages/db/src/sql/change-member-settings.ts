import { clientOf, withTransaction, type DatabaseHandle } from '../client';
import { moveMemberDigests } from './move-member-digests';

/** A change of a member's settings; an absent field is kept (name, zone and quiet hours as validated). */
export interface MemberSettings {
  name?: string | null;
  /** null: the organization's. */
  timezone?: string | null;
  /** null: none. */
  quietHours?: { startHour: number; endHour: number } | null;
}

/**
 * Changes a member's name, time zone or quiet hours at `now`, in one transaction with the member's
 * row locked: a change of their effective zone (their own, or the organization's when they have
 * none) moves what their digest rules owe them to the new zone's current period
 * (moveMemberDigests): no period twice, none lost. False when the organization has no such member.
 */
export async function changeMemberSettings(db: DatabaseHandle, organizationId: string, memberId: string, change: MemberSettings, now: Date): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const { rows } = await clientOf(tx).query<{ timezone: string | null; zone_since: Date | null; org_zone: string }>(
      `SELECT t.timezone, t.zone_since, o.timezone AS org_zone FROM team_members t JOIN organizations o ON o.id = t.organization_id
        WHERE t.id = $1 AND t.organization_id = $2 FOR UPDATE OF t`,
      [memberId, organizationId],
    );
    const row = rows[0];
    if (!row) return false;
    const from = row.timezone ?? row.org_zone;
    const to = change.timezone === undefined ? from : (change.timezone ?? row.org_zone);
    await clientOf(tx).query(
      `UPDATE team_members SET
         name = CASE WHEN $2 THEN $3 ELSE name END,
         timezone = CASE WHEN $4 THEN $5 ELSE timezone END,
         quiet_start_hour = CASE WHEN $6 THEN $7::smallint ELSE quiet_start_hour END,
         quiet_end_hour = CASE WHEN $6 THEN $8::smallint ELSE quiet_end_hour END
       WHERE id = $1`,
      [
        memberId, change.name !== undefined, change.name ?? null, change.timezone !== undefined, change.timezone ?? null,
        change.quietHours !== undefined, change.quietHours?.startHour ?? null, change.quietHours?.endHour ?? null,
      ],
    );
    if (from !== to) await moveMemberDigests(tx, { memberId, from, fromSince: row.zone_since, to }, now);
    return true;
  });
}
