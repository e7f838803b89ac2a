import { clientOf, withTransaction, type DatabaseHandle } from '../client';
import { moveMemberDigests } from './move-member-digests';

/**
 * Changes an organization's time zone to `to` at `now`, and moves the digests of the members who
 * have none of their own, in one transaction (moveMemberDigests): no period twice, none lost. The
 * organization's row and those members' are locked first; nothing changes when the zone is the same.
 */
export async function changeOrganizationTimeZone(db: DatabaseHandle, id: string, to: string, now: Date): Promise<void> {
  await withTransaction(db, async (tx) => {
    const client = clientOf(tx);
    const { rows } = await client.query<{ timezone: string }>(`SELECT timezone FROM organizations WHERE id = $1 FOR UPDATE`, [id]);
    const from = rows[0]?.timezone;
    if (from === undefined || from === to) return;
    await client.query(`UPDATE organizations SET timezone = $2, updated_at = $3 WHERE id = $1`, [id, to, now]);
    const members = await client.query<{ id: string; zone_since: Date | null }>(
      `SELECT id, zone_since FROM team_members WHERE organization_id = $1 AND timezone IS NULL ORDER BY id FOR UPDATE`,
      [id],
    );
    for (const member of members.rows) await moveMemberDigests(tx, { memberId: member.id, from, fromSince: member.zone_since, to }, now);
  });
}
