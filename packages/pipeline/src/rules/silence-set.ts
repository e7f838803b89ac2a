import { compileFilters, SILENCE_FIELDS, type Filters, type MatchableEvent, type Predicate } from '@notify/core';
import type { UnexpiredSilence } from '@notify/db';

/** A silence not yet expired, as the match stage holds it: filters compiled once. */
export interface IndexedSilence {
  id: string;
  /** null: every rule of the organization. */
  ruleIds: ReadonlySet<string> | null;
  startsAt: number;
  endsAt: number;
  covers: Predicate;
}

const NONE: readonly IndexedSilence[] = [];

/**
 * The asset, lowered, that a silence's `must` requires with `eq` (the usual silence: one host
 * in maintenance), or null. `eq` compares strings as their lowered forms, so an event whose
 * lowered asset differs cannot be covered.
 */
function requiredAsset(filters: Filters): string | null {
  for (const condition of Array.isArray(filters.must) ? filters.must : []) {
    if (condition.name === 'asset' && condition.type === 'eq' && typeof condition.value === 'string') return condition.value.toLowerCase();
  }
  return null;
}

/**
 * One organization's unexpired silences. Silences that require an asset are kept by it, so an
 * event is tested against those of its own asset and the others only: an organization may hold
 * SILENCE_LIMITS.maxUnexpiredPerOrganization of them, and every event of it meets them.
 */
export class SilenceSet {
  private readonly byAsset = new Map<string, Array<{ order: number; silence: IndexedSilence }>>();
  private readonly others: Array<{ order: number; silence: IndexedSilence }> = [];

  constructor(rows: readonly UnexpiredSilence[]) {
    rows.forEach((row, order) => {
      const silence: IndexedSilence = {
        id: row.id,
        ruleIds: row.rule_ids?.length ? new Set(row.rule_ids) : null,
        startsAt: row.starts_at.getTime(),
        endsAt: row.ends_at.getTime(),
        covers: compileFilters(row.filters, SILENCE_FIELDS),
      };
      const asset = requiredAsset(row.filters);
      if (asset === null) this.others.push({ order, silence });
      else {
        const list = this.byAsset.get(asset);
        if (list) list.push({ order, silence });
        else this.byAsset.set(asset, [{ order, silence }]);
      }
    });
  }

  /** The silences active at `now` that cover `event`, in the order they were loaded. */
  covering(event: MatchableEvent, now: number): readonly IndexedSilence[] {
    const ofAsset = this.byAsset.size && typeof event.asset === 'string' ? this.byAsset.get(event.asset.toLowerCase()) : undefined;
    const found: Array<{ order: number; silence: IndexedSilence }> = [];
    if (ofAsset) collectCovering(ofAsset, event, now, found);
    collectCovering(this.others, event, now, found);
    if (!found.length) return NONE;
    if (ofAsset && this.others.length) found.sort((a, b) => a.order - b.order);
    return found.map((entry) => entry.silence);
  }
}

function collectCovering(list: ReadonlyArray<{ order: number; silence: IndexedSilence }>, event: MatchableEvent, now: number, found: Array<{ order: number; silence: IndexedSilence }>): void {
  for (const entry of list) {
    const { silence } = entry;
    if (silence.startsAt <= now && now < silence.endsAt && silence.covers(event)) found.push(entry);
  }
}

/** Unexpired silences by organization. */
export function silencesByOrganization(rows: readonly UnexpiredSilence[]): Map<string, SilenceSet> {
  const grouped = new Map<string, UnexpiredSilence[]>();
  for (const row of rows) {
    const list = grouped.get(row.organization_id);
    if (list) list.push(row);
    else grouped.set(row.organization_id, [row]);
  }
  return new Map([...grouped].map(([organizationId, list]) => [organizationId, new SilenceSet(list)]));
}
