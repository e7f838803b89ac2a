import { IANAZone } from 'luxon';

// Newer ICU builds accept bare offsets such as '+02:00' as time zones; requiring a
// name shape keeps stored values to IANA names whatever Node version runs.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

// luxon answers isValidZone by building an Intl.DateTimeFormat each time: costly,
// and outside the JS heap. The set of zone names is small: remember each answer.
const validity = new Map<string, boolean>();

/** True for IANA zone names (including 'UTC'); bare offsets and unknown names are rejected. */
export function isValidTimeZone(zone: string): boolean {
  if (typeof zone !== 'string') return false;
  let valid = validity.get(zone);
  if (valid === undefined) {
    valid = ZONE_NAME.test(zone) && IANAZone.isValidZone(zone);
    if (validity.size < 10_000) validity.set(zone, valid);
  }
  return valid;
}

export function assertTimeZone(zone: string): void {
  if (!isValidTimeZone(zone)) throw new Error(`Invalid time zone ${JSON.stringify(zone)}: expected an IANA name such as 'Europe/Berlin' or 'UTC'`);
}

/** Offset from UTC in milliseconds at instant `ms`. */
export function offsetAt(zone: string, ms: number): number {
  // Rounded because pre-1900 local mean time offsets come back as fractional minutes.
  return Math.round(IANAZone.create(zone).offset(ms) * 60_000);
}

/** The first instant in (lo, hi] whose offset differs from the offset at `lo`; requires one to exist. */
export function offsetChangeBetween(zone: string, lo: number, hi: number): number {
  const before = offsetAt(zone, lo);
  let low = lo;
  let high = hi;
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2);
    if (offsetAt(zone, mid) === before) low = mid;
    else high = mid;
  }
  return high;
}
