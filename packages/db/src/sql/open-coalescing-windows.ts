import { clientOf, named, type Transaction } from '../client';

export interface CoalescingWindow {
  /** The rule's id. */
  id: string;
  /** Until when the rule's matches join a burst. */
  burst_until: Date;
  /** Whether this call opened the window (the rule was quiet): its first match goes out at once. */
  opened: boolean;
}

/**
 * Opens a coalescing window until `until` on every instant rule of `ruleIds` that is quiet at
 * `now` (no window, or one that has ended), and returns every rule's window. The rules' rows
 * are locked in id order for the transaction, so two match jobs agree on which match is "first".
 */
export async function openCoalescingWindows(tx: Transaction, ruleIds: readonly string[], now: Date, until: Date): Promise<CoalescingWindow[]> {
  const { rows } = await clientOf(tx).query<CoalescingWindow>(named('open-coalescing-windows',
    `WITH old AS (
       SELECT id, burst_until FROM notification_rules WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE
     )
     UPDATE notification_rules r
        SET burst_until = CASE WHEN old.burst_until IS NULL OR old.burst_until <= $2 THEN $3 ELSE old.burst_until END
       -- The ids again, for the rows to update: joined to \`old\` alone (ten rows estimated), a plan
       -- made for a few thousand rules read them all into a hash for each call.
       FROM old WHERE r.id = old.id AND r.id = ANY($1::uuid[])
     RETURNING r.id, r.burst_until, (old.burst_until IS NULL OR old.burst_until <= $2) AS opened`,
    [ruleIds, now, until],
  ));
  return rows;
}
