import { poolOf, type DatabaseHandle } from '../client';

/** Marks a member's address as bouncing (kept from the first bounce until an operator clears it), with the server's reply. */
export async function markBouncing(db: DatabaseHandle, memberId: string, reply: string): Promise<void> {
  await poolOf(db).query(
    `UPDATE team_members SET bouncing_since = COALESCE(bouncing_since, now()), bounce_reply = left($2, 300) WHERE id = $1`,
    [memberId, reply],
  );
}
