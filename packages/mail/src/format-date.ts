import { IANAZone } from 'luxon';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// luxon's `ZZZZ` token builds a new Intl.DateTimeFormat on every call, which is costly: luxon does
// the zone arithmetic, and the abbreviation is looked up once per zone and offset (CET and CEST
// differ by offset).
const zoneNameFormats = new Map<string, Intl.DateTimeFormat>();
const zoneNames = new Map<string, string>();

function zoneName(date: Date, zone: string, offset: number): string {
  const key = `${zone} ${offset}`;
  let name = zoneNames.get(key);
  if (name === undefined) {
    let format = zoneNameFormats.get(zone);
    if (!format) {
      format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, timeZoneName: 'short' });
      zoneNameFormats.set(zone, format);
    }
    name = format.formatToParts(date).find((part) => part.type === 'timeZoneName')?.value ?? zone;
    if (zoneNames.size < 10_000) zoneNames.set(key, name);
  }
  return name;
}

const validZones = new Map<string, boolean>();

/** The zone itself when it is a valid IANA name, otherwise UTC: a bad setting must not stop an alert. */
export function effectiveZone(timeZone: string): string {
  let valid = validZones.get(timeZone);
  if (valid === undefined) {
    valid = typeof timeZone === 'string' && IANAZone.isValidZone(timeZone);
    if (validZones.size < 1000) validZones.set(timeZone, valid);
  }
  return valid ? timeZone : 'UTC';
}

const pad = (value: number): string => (value < 10 ? `0${value}` : String(value));

const HOUR_MS = 3_600_000;
/** Per zone, its UTC offset (minutes) in each UTC hour that has one offset throughout. */
const hourOffsets = new Map<string, Map<number, number>>();
const MAX_CACHED_HOURS = 100_000;
let cachedHours = 0;

/**
 * The zone's UTC offset at `time`, in minutes. luxon asks Intl for the zone's wall-clock parts on
 * every call (most of a digest's date formatting: see commit ef4d1ae); a zone's offset changes
 * only at its transitions, so it is asked once per UTC hour in which the offset is the same at
 * both ends (a transition inside an hour is asked each time).
 */
function offsetAt(zone: string, time: number): number {
  const hour = Math.floor(time / HOUR_MS);
  let hours = hourOffsets.get(zone);
  const known = hours?.get(hour);
  if (known !== undefined) return known;
  const iana = IANAZone.create(zone);
  const start = iana.offset(hour * HOUR_MS);
  if (start !== iana.offset(hour * HOUR_MS + HOUR_MS - 1)) return iana.offset(time);
  if (cachedHours >= MAX_CACHED_HOURS) {
    hourOffsets.clear();
    cachedHours = 0;
    hours = undefined;
  }
  if (!hours) hourOffsets.set(zone, (hours = new Map()));
  hours.set(hour, start);
  cachedHours += 1;
  return start;
}

/** "20 Nov 2026, 11:15 CET" in the given (already validated) zone. */
export function formatDateTime(date: Date, zone: string): string {
  const time = date instanceof Date ? date.getTime() : Number.NaN;
  if (!Number.isFinite(time)) return 'unknown time';
  const offset = offsetAt(zone, time);
  // The wall clock: the UTC fields of the instant moved by the offset.
  const local = new Date(time + offset * 60_000);
  return `${local.getUTCDate()} ${MONTHS[local.getUTCMonth()] ?? ''} ${local.getUTCFullYear()}, ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())} ${zoneName(date, zone, offset)}`;
}
