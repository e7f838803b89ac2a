import { DateTime } from 'luxon';

// Basic ISO 8601 in UTC: sortable, the same in every process, and free of ':' and '-'
// so it sits safely inside job ids such as `digest:<rule>:<key>`.
const KEY_FORMAT = "yyyyLLdd'T'HHmmss'Z'";
const KEY_SHAPE = /^\d{8}T\d{6}Z$/;

export function periodKey(dueAt: number): string {
  return DateTime.fromMillis(dueAt, { zone: 'utc' }).toFormat(KEY_FORMAT);
}

/** The instant a key names, or null when it is not a well-formed key of a real UTC time. */
export function parsePeriodKey(key: string): number | null {
  if (typeof key !== 'string' || !KEY_SHAPE.test(key)) return null;
  const parsed = DateTime.fromFormat(key, KEY_FORMAT, { zone: 'utc' });
  // The round trip rejects out-of-range fields such as month 13 or 24:00.
  if (!parsed.isValid || parsed.toFormat(KEY_FORMAT) !== key) return null;
  return parsed.toMillis();
}
