// C0/C1 controls plus the Unicode line/paragraph separators and bidi overrides: any of them in a
// subject or a one-line field could split a header or make text read differently than it is.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_ONE_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]+/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_MULTI_LINE = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]+/g;

/**
 * A text that is not one line already: a character UNSAFE_ONE_LINE matches, or two spaces in a row.
 * Most of what an e-mail shows (titles, hosts, tags, data) is one line, and one test that finds
 * nothing costs about half of the two replaces that find nothing, which were a noticeable part of
 * building a digest's view (measured: see commit f6b75c5). No `g`: the test keeps no position.
 */
const NOT_ONE_LINE = new RegExp(`${UNSAFE_ONE_LINE.source.replace(/\+$/, '')}| {2}`);

/** One line of text: every control or separator becomes a space, runs of spaces collapse. */
export function singleLine(value: string, maxLength: number): string {
  const line = NOT_ONE_LINE.test(value) ? value.replace(UNSAFE_ONE_LINE, ' ').replace(/ {2,}/g, ' ') : value;
  return truncate(line.trim(), maxLength);
}

/** Free text that may keep its line breaks (CRLF and CR normalised to LF). */
export function multiLine(value: string, maxLength: number): string {
  const text = value
    .replace(/\r\n?/g, '\n')
    .replace(UNSAFE_MULTI_LINE, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return truncate(text, maxLength);
}

/** Cuts by code points so a surrogate pair is never split, and marks the cut with an ellipsis. */
export function truncate(value: string, maxLength: number): string {
  if (value.length <= maxLength) return value;
  const points = Array.from(value);
  if (points.length <= maxLength) return value;
  return `${points.slice(0, maxLength - 1).join('').trimEnd()}…`;
}

/** The URL when it is absolute http(s), otherwise null: `javascript:`, `data:` and the like never become links. */
export function httpUrl(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}
