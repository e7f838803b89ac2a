import type { Severity } from '@notify/core';
import type { EventDetails } from '@notify/core';

/** Most severe first; events without a severity come last. */
export const SEVERITY_ORDER: readonly (Severity | null)[] = ['critical', 'high', 'medium', 'low', 'info', null];

function rank(severity: Severity | null): number {
  const index = SEVERITY_ORDER.indexOf(severity);
  return index === -1 ? SEVERITY_ORDER.length - 1 : index;
}

function time(event: EventDetails): number {
  const value = event.occurredAt.getTime();
  return Number.isFinite(value) ? value : 0;
}

export interface SeverityGroup {
  severity: Severity | null;
  /** Events of this asset and severity, listed or not. */
  count: number;
  /** The listed ones, newest first. */
  events: EventDetails[];
}

export interface AssetGroup {
  asset: string;
  assetType: string | null;
  count: number;
  severities: SeverityGroup[];
}

export interface GroupedEvents {
  total: number;
  bySeverity: { severity: Severity | null; count: number }[];
  /** Every asset with its count, most severe first, then most events. */
  assets: { asset: string; count: number }[];
  /** Only the assets that have listed events. */
  groups: AssetGroup[];
  listed: number;
  omitted: number;
}

interface AssetTally {
  asset: string;
  assetType: string | null;
  count: number;
  topRank: number;
  perRank: number[];
}

/**
 * Counts cover every event; only the `limit` most important (most severe, then newest) are listed,
 * grouped by asset, then by severity.
 */
export function groupEvents(events: readonly EventDetails[], limit: number): GroupedEvents {
  const severityCounts = SEVERITY_ORDER.map(() => 0);
  const tallies = new Map<string, AssetTally>();
  for (const event of events) {
    const r = rank(event.severity);
    severityCounts[r] = (severityCounts[r] ?? 0) + 1;
    let tally = tallies.get(event.asset);
    if (!tally) {
      tally = { asset: event.asset, assetType: null, count: 0, topRank: r, perRank: SEVERITY_ORDER.map(() => 0) };
      tallies.set(event.asset, tally);
    }
    tally.count += 1;
    tally.topRank = Math.min(tally.topRank, r);
    tally.perRank[r] = (tally.perRank[r] ?? 0) + 1;
    tally.assetType ??= event.assetType;
  }

  const assetOrder = [...tallies.values()].sort(
    (a, b) => a.topRank - b.topRank || b.count - a.count || (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0),
  );

  const chosen = [...events]
    .sort((a, b) => rank(a.severity) - rank(b.severity) || time(b) - time(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, Math.max(0, limit));
  // `chosen` is already in severity-then-newest order, so appending keeps every group sorted.
  const listedByAsset = new Map<string, EventDetails[][]>();
  for (const event of chosen) {
    let buckets = listedByAsset.get(event.asset);
    if (!buckets) {
      buckets = SEVERITY_ORDER.map(() => []);
      listedByAsset.set(event.asset, buckets);
    }
    buckets[rank(event.severity)]?.push(event);
  }

  const groups: AssetGroup[] = [];
  for (const tally of assetOrder) {
    const buckets = listedByAsset.get(tally.asset);
    if (!buckets) continue;
    const severities: SeverityGroup[] = [];
    buckets.forEach((listed, r) => {
      if (listed.length > 0) severities.push({ severity: SEVERITY_ORDER[r] ?? null, count: tally.perRank[r] ?? 0, events: listed });
    });
    groups.push({ asset: tally.asset, assetType: tally.assetType, count: tally.count, severities });
  }

  return {
    total: events.length,
    bySeverity: SEVERITY_ORDER.map((severity, r) => ({ severity, count: severityCounts[r] ?? 0 })).filter((s) => s.count > 0),
    assets: assetOrder.map(({ asset, count }) => ({ asset, count })),
    groups,
    listed: chosen.length,
    omitted: events.length - chosen.length,
  };
}
