import type { Scope } from '@notify/core';
import { findDuePeriods, findUnmatchedEvents, findUnsentDeliveries } from '@notify/db';
import type { PipelineResources } from '../resources';

export interface ReconcileResult {
  /** Events asked to be matched again. */
  events: number;
  /** Due periods asked to be delivered. */
  periods: number;
  /** Deliveries asked to be sent again. */
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
export async function reconcile(ctx: PipelineResources, options: ReconcileOptions = {}): Promise<ReconcileResult> {
  const graceMs = options.graceMs ?? 10_000;
  const limit = options.limit ?? 10_000;
  const before = new Date(ctx.now().getTime() - graceMs);

  let rematched = 0;
  const events = await findUnmatchedEvents(ctx.db, before, limit);
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
    const queued = await ctx.queues.match.get(scope)!.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    const busy = Object.values(queued).some((count) => count > 0);
    const lost = busy ? unmatched.filter((event) => event.received_at.getTime() <= staleBefore) : unmatched;
    await ctx.queues.requestMatch(scope, lost.map((event) => [event.organization_id, event.id]));
    rematched += lost.length;
  }

  // Work the record still owes may have a finished job of the same id in Redis (it failed all its
  // retries during a long database outage, or stalled twice): that job must not hide it. A period
  // due for less than the grace is the schedule stage's, which asks for every due period each tick
  // (or delivers it in its own process, with no job for this to find): asking again meanwhile would
  // only deliver it twice over, to no effect (a whole 09:00 wave, at worst).
  const due = await findDuePeriods(ctx.db, before, limit);
  await ctx.queues.requestDeliver(due, 0, { replaceFinished: true });

  const deliveries = await findUnsentDeliveries(ctx.db, before, limit);
  await ctx.queues.requestSend(deliveries, { replaceFinished: true });
  return { events: rematched, periods: due.length, deliveries: deliveries.length };
}
