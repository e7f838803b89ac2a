import { offsetAt, offsetChangeBetween } from './time-zone';

const HOUR = 3_600_000;
// Wide enough to see the offsets on both sides of any transition near the wall time,
// narrow enough that two transitions never fall inside it.
const LOOK_AROUND = 36 * HOUR;

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
}

/**
 * The instant a local wall time denotes, with the product's DST rules: a wall time that
 * occurs twice maps to its first occurrence, one that does not exist (a spring-forward
 * gap, or a calendar day a zone skipped) maps to the first valid instant after it.
 * Luxon is not used for this step because it picks the second occurrence of a repeated
 * hour and shifts a missing one by the offset change, which overshoots on skipped days.
 */
export function resolveWallTime(zone: string, wall: WallTime): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour);
  const offsetBefore = offsetAt(zone, asUtc - LOOK_AROUND);
  const offsetAfter = offsetAt(zone, asUtc + LOOK_AROUND);
  const candidates = [asUtc - offsetBefore, asUtc - offsetAfter].filter(
    (instant) => instant + offsetAt(zone, instant) === asUtc,
  );
  if (candidates.length > 0) return Math.min(...candidates);
  if (offsetAfter <= offsetBefore) {
    throw new Error(`Cannot resolve ${JSON.stringify(wall)} in time zone ${zone}`);
  }
  // In a gap: before the transition the wall time is still ahead, after it already past.
  return offsetChangeBetween(zone, asUtc - offsetAfter, asUtc - offsetBefore);
}
