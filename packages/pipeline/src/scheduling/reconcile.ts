import type { Scope } from '@notify/core';
import type { PipelineContext } from '../context';
import { requestDueDigests } from './due-periods';

export interface ReconcileResult {
  events: number;
  digests: number;
  deliveries: number;
}

export interface ReconcileOptions {
  /** Work younger than this is presumably in flight, not lost. */
  graceMs?: number;
  limit?: number;
}

/**
 * PostgreSQL is the record and Redis the transport: this rebuilds from the
 * record whatever transport lost (a Redis restart, a publish that failed after
 * the commit). Every request it makes has a deterministic job id or is idempotent
 * in the database, so running it while the work is in fact in flight is harmless.
 */
export async function reconcile(ctx: PipelineContext, options: ReconcileOptions = {}): Promise<ReconcileResult> {
  const graceMs = options.graceMs ?? 10_000;
  const limit = options.limit ?? 10_000;
  const before = new Date(ctx.now().getTime() - graceMs);

  let republished = 0;
  const { rows: events } = await ctx.db.pool.query<{ organization_id: string; id: string; scope: Scope; received_at: Date }>(
    `SELECT organization_id, id, scope, received_at FROM events WHERE matched_at IS NULL AND received_at <= $1 ORDER BY received_at LIMIT $2`,
    [before, limit],
  );
  const byScope = new Map<Scope, typeof events>();
  for (const event of events) {
    const list = byScope.get(event.scope);
    if (list) list.push(event);
    else byScope.set(event.scope, [event]);
  }
  const staleBefore = ctx.now().getTime() - graceMs * 10;
  for (const [scope, unmatched] of byScope) {
    // While a scope's queue still holds jobs, its unmatched events are probably in
    // them (a backlog, not a loss); only long-unmatched events are sent again then.
    const queued = await ctx.queues.events.get(scope)!.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    const busy = Object.values(queued).some((count) => count > 0);
    const lost = busy ? unmatched.filter((event) => event.received_at.getTime() <= staleBefore) : unmatched;
    await ctx.queues.publishEvents(scope, lost.map((event) => [event.organization_id, event.id]));
    republished += lost.length;
  }

  // Work the record still owes may have a finished job of the same id in Redis (it failed all its
  // retries during a long database outage, or stalled twice): that job must not hide it.
  const digests = await requestDueDigests(ctx, { limit, replaceFinished: true });

  const { rows: deliveries } = await ctx.db.pool.query<{ id: string }>(
    `SELECT id FROM deliveries WHERE status IN ('pending', 'sending') AND updated_at <= $1 ORDER BY updated_at LIMIT $2`,
    [before, limit],
  );
  await ctx.queues.requestMail(deliveries.map((delivery) => delivery.id), { replaceFinished: true });
  return { events: republished, digests, deliveries: deliveries.length };
}
