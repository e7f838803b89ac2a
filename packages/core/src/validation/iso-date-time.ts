/**
 * The date-times the API reads (an event's `occurred_at`, a silence's bounds, a list's date
 * filters) and the UTC offsets it takes for real ones.
 */

/** Real UTC offsets run from -12:00 to +14:00; beyond that (+99:99, +2400) is no time zone at all. */
const MAX_UTC_OFFSET_MINUTES = 14 * 60;

/** An offset's `HH`, `MM` within a real time zone's range. */
export function isRealUtcOffset(hours: number, minutes: number): boolean {
  return minutes <= 59 && hours * 60 + minutes <= MAX_UTC_OFFSET_MINUTES;
}

const [DASH, COLON, DOT, PLUS, SPACE, UPPER_T, LOWER_T, UPPER_Z, LOWER_Z] = [...'-:.+ TtZz'].map((c) => c.charCodeAt(0));

/** The number of the `length` ASCII digits of `text` from `at`, or -1 when one is not a digit. */
function digitsAt(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    // Past the end, charCodeAt is NaN: not a digit either.
    if (!(digit >= 0 && digit <= 9)) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * YYYY-MM-DD, optionally Thh:mm[:ss[.ffffff]] (T, t or a space), optionally Z or ±HH[:]MM (a '+'
 * that a query string turned into a space is taken back as '+'), after trimming: the time it names,
 * its fraction cut to milliseconds; undefined for any other text, a day or time that does not exist
 * (2026-02-30, 24:00, :60), an offset beyond a real zone's, or a year outside 1–9999, written or
 * in UTC (the range of the DRF/Python datetimes users know; year 0000 used to pass and then fail
 * PostgreSQL's input with a 500 on ingest, found by test/faults/hostile-input.test.ts).
 *
 * Read character by character, without a pattern or a second parse of the text by Date: ingest
 * reads every event's `occurred_at` with it, twice (its schema's format, then the event), and the
 * pattern's reading cost several times as much a call (measured: see commit 55f1f88). A property
 * test (iso-date-time.test.ts) holds it to that reading.
 */
export function parseIsoDateTime(raw: string): Date | undefined {
  const text = raw.trim();
  const end = text.length;
  if (end < 10 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return undefined;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let millisecond = 0;
  let at = 10;
  const separator = text.charCodeAt(at);
  if ((separator === UPPER_T || separator === LOWER_T || separator === SPACE) && text.charCodeAt(at + 3) === COLON) {
    hour = digitsAt(text, at + 1, 2);
    minute = digitsAt(text, at + 4, 2);
    if (hour < 0 || minute < 0) return undefined;
    at += 6;
    if (text.charCodeAt(at) === COLON) {
      second = digitsAt(text, at + 1, 2);
      if (second < 0) return undefined;
      at += 3;
      if (text.charCodeAt(at) === DOT) {
        let digits = 0;
        for (at++; at < end && digits < 6; at++, digits++) {
          const digit = text.charCodeAt(at) - 48;
          if (!(digit >= 0 && digit <= 9)) break;
          if (digits < 3) millisecond = millisecond * 10 + digit;
        }
        if (digits === 0) return undefined;
        for (let pad = digits; pad < 3; pad++) millisecond *= 10;
      }
    }
  }
  let offsetMinutes = 0;
  if (at < end) {
    const sign = text.charCodeAt(at);
    if (sign === PLUS || sign === DASH || sign === SPACE) {
      const colon = text.charCodeAt(at + 3) === COLON ? 1 : 0;
      if (at + 5 + colon !== end) return undefined;
      const hours = digitsAt(text, at + 1, 2);
      const minutes = digitsAt(text, at + 3 + colon, 2);
      if (hours < 0 || minutes < 0 || !isRealUtcOffset(hours, minutes)) return undefined;
      offsetMinutes = (sign === DASH ? -1 : 1) * (hours * 60 + minutes);
    } else if (!((sign === UPPER_Z || sign === LOWER_Z) && at + 1 === end)) {
      return undefined;
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  // Date.UTC would read years 0–99 as 1900–1999: the year is set apart.
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millisecond));
  if (date.getUTCDate() !== day) return undefined; // 2026-02-30 rolls over
  date.setUTCFullYear(year);
  // A 29 February of a year that has none rolls over too.
  if (date.getUTCMonth() !== month - 1) return undefined;
  date.setTime(date.getTime() - offsetMinutes * 60_000);
  const utcYear = date.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return undefined;
  return date;
}
