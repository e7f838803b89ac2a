import { DateTime, IANAZone } from 'luxon';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// luxon's `ZZZZ` token builds a new Intl.DateTimeFormat on every call (~100 µs): luxon does the zone
// arithmetic, and the abbreviation is looked up once per zone and offset (CET and CEST differ by offset).
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

/** "20 Nov 2026, 11:15 CET" in the given (already validated) zone. */
export function formatDateTime(date: Date, zone: string): string {
  const time = date instanceof Date ? date.getTime() : Number.NaN;
  if (!Number.isFinite(time)) return 'unknown time';
  const local = DateTime.fromMillis(time, { zone });
  return `${local.day} ${MONTHS[local.month - 1] ?? ''} ${local.year}, ${pad(local.hour)}:${pad(local.minute)} ${zoneName(date, zone, local.offset)}`;
}
