import type { EventDetails } from '@notify/core';
import { isUuid } from '@notify/core/basics';
import { LRUCache } from 'lru-cache';

/**
 * E-mail is not a channel for secrets. Events of credential and breach scopes carry the leaked
 * secret itself (a password, a token, a card number); the e-mail says enough to recognise the
 * finding and never the value. Masked, in every part of every e-mail (subject, text, HTML):
 *
 * - by field name: the value of a `data` field whose name (at any depth) reads as a secret
 *   (`password`, `api_key`, `clientSecret`, `x-auth-token`, …; see `isSecretName`), and in free text
 *   the value after `name=` or `name:` for such a name;
 * - by shape, anywhere in the title, summary, tags, link and data: card numbers (13–19 digits,
 *   spaces or dashes between, passing Luhn) keep their last four digits, and long high-entropy
 *   strings (tokens, keys, hashes) a few characters of each end.
 *
 * Everything here is one pass over its input, no regular expressions, so a hostile event costs
 * time in proportion to its size. The stored event keeps its values; only what is written into an
 * e-mail is masked.
 */

export const MASK = '•••••';

/** Words that make a field name secret when they are one of its words (snake, kebab, camel or dotted). */
const SECRET_WORDS = new Set([
  'password', 'passwd', 'pwd', 'pass', 'passphrase', 'passcode', 'secret', 'token', 'apikey', 'cvv', 'cvv2', 'cvc',
  'cvc2', 'cid', 'pin', 'hash', 'session', 'sessionid', 'cookie', 'authorization', 'auth', 'credential', 'otp', 'totp',
  'salt', 'ssn', 'bearer', 'jwt', 'pan', 'seed', 'mnemonic', 'signature', 'sid',
]);

/** Names glued together without separators (`userpassword`, `x_api_key` → `xapikey`) still read as secret. */
const SECRET_PARTS = [
  'password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'accesskey', 'privatekey', 'sshkey', 'signingkey',
  'encryptionkey', 'masterkey', 'credential', 'authorization', 'cookie', 'session', 'cardnumber', 'securitycode',
];

const NAME_LIMIT = 128;

function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}
function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isAlnum(c: number): boolean {
  return isLower(c) || isUpper(c) || isDigit(c);
}

/**
 * Names judged lately: events of a scope carry the same few field names (`port`, `service`,
 * `password`), and each e-mail judges every one of each event's, so most judgments are repeats.
 * Bounded, as names come from what scanners send; the least recently judged go first.
 */
const judgedNames = new LRUCache<string, boolean>({ max: 1000 });

/** Whether a field name reads as a secret; case-insensitive, camelCase split into words, nested names judged alone. */
export function isSecretName(name: string): boolean {
  const known = judgedNames.get(name);
  if (known !== undefined) return known;
  const secret = judgeName(name);
  if (name.length <= NAME_LIMIT) judgedNames.set(name, secret);
  return secret;
}

function judgeName(name: string): boolean {
  const text = name.length > NAME_LIMIT ? name.slice(0, NAME_LIMIT) : name;
  let glued = '';
  let word = '';
  const wordIsSecret = () => {
    const lower = word.toLowerCase();
    word = '';
    return lower !== '' && (SECRET_WORDS.has(lower) || (lower.endsWith('s') && SECRET_WORDS.has(lower.slice(0, -1))));
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isAlnum(c)) {
      if (wordIsSecret()) return true;
      continue;
    }
    const previous = i > 0 ? text.charCodeAt(i - 1) : 0;
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    // camelCase and acronyms: `apiKey` → api|Key, `userPIN` → user|PIN, `PINCode` → PIN|Code.
    if (isUpper(c) && word !== '' && (isLower(previous) || isDigit(previous) || (isUpper(previous) && isLower(next)))) {
      if (wordIsSecret()) return true;
    }
    word += text[i];
    glued += text[i]!.toLowerCase();
  }
  if (wordIsSecret()) return true;
  return SECRET_PARTS.some((part) => glued.includes(part));
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function codePoints(value: string, limit: number): string[] {
  const points: string[] = [];
  for (const point of value) {
    points.push(point);
    if (points.length >= limit) break;
  }
  return points;
}

/**
 * A secret's whole value: a card number keeps its last four digits, other short or all-digit values
 * (PINs, CVVs) nothing, longer ones two characters at the start and one at the end (four and two
 * from 16 characters on). The mask has one length whatever the value's, so it does not tell it.
 */
export function maskSecret(value: string): string {
  const text = value.trim();
  const card = cardDigits(text);
  if (card) return `•••• ${card.slice(-4)}`;
  let allDigits = true;
  for (let i = 0; i < text.length && allDigits; i++) allDigits = isDigit(text.charCodeAt(i));
  const head = codePoints(text, 17);
  if (head.length < 6 || allDigits) return MASK;
  const long = head.length > 16;
  const tail = long ? codePoints(text.slice(-8), 8) : head;
  return `${head.slice(0, long ? 4 : 2).join('')}${MASK}${tail.slice(long ? -2 : -1).join('')}`;
}

/** The digits of a value that is exactly a card number (separators allowed), or undefined. */
function cardDigits(text: string): string | undefined {
  if (text.length > 40) return undefined;
  const run = digitRun(text, 0);
  return run && run.end === text.length && run.card ? run.digits : undefined;
}

/** Digits a card number has at least (and 19 at most). */
const MIN_CARD_DIGITS = 13;

interface DigitRun {
  end: number;
  digits: string;
  card: boolean;
}

/** The run of digits starting at `start`, single spaces or dashes between them; at most 20 digits are kept. */
function digitRun(text: string, start: number): DigitRun {
  let digits = '';
  let count = 0;
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      if (count < 20) digits += text[i];
      count++;
      i++;
    } else if ((c === 32 || c === 45) && i + 1 < text.length && isDigit(text.charCodeAt(i + 1)) && count > 0) {
      i++;
    } else {
      break;
    }
  }
  // A card number stands alone: not glued to letters or more digits on either side.
  const before = start > 0 ? text.charCodeAt(start - 1) : 32;
  const after = i < text.length ? text.charCodeAt(i) : 32;
  const alone = !isAlnum(before) && !isAlnum(after);
  return { end: i, digits, card: alone && count >= MIN_CARD_DIGITS && count <= 19 && luhn(digits) };
}

/** Characters of tokens, keys and base64; `.` and `=` are not (JWT parts and `name=value` split there). */
function isTokenChar(c: number): boolean {
  return isAlnum(c) || c === 43 || c === 47 || c === 95 || c === 45;
}

const MIN_TOKEN_LENGTH = 20;
const counts = new Uint16Array(128);

/**
 * Looks like a key or token: 20 characters or more, and either hexadecimal of 32 or more (hashes,
 * keys) or mixing letters and digits or cases with the Shannon entropy of random text.
 * Identifiers (`internal_reporting_service`), paths and UUIDs are left alone.
 */
export function isHighEntropy(word: string): boolean {
  if (word.length < MIN_TOKEN_LENGTH || isUuid(word)) return false;
  counts.fill(0);
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let hex = true;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 128) counts[c]!++;
    if (isLower(c)) lower++;
    else if (isUpper(c)) upper++;
    else if (isDigit(c)) digit++;
    if (!(isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) hex = false;
  }
  let entropy = 0;
  for (let c = 0; c < 128; c++) {
    const n = counts[c]!;
    if (n > 0) {
      const p = n / word.length;
      entropy -= p * Math.log2(p);
    }
  }
  if (hex && digit > 0 && word.length >= 32) return entropy >= 3;
  const classes = (lower > 0 ? 1 : 0) + (upper > 0 ? 1 : 0) + (digit > 0 ? 1 : 0);
  return classes >= 2 && entropy >= Math.min(4, Math.log2(word.length) - 0.6);
}

/** Ends the value after `name=` / `name: ` in free text. */
function endsValue(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 34 || c === 39 || c === 38 || c === 44 || c === 59 || c === 60 || c === 62;
}

/** What mayHoldSecret asks of an ASCII character, by code: 1 a digit, 2 a token character (isTokenChar), 4 `=` or `:`. */
const CHARACTER_KINDS = Uint8Array.from({ length: 128 }, (_, c) => (isDigit(c) ? 1 : 0) | (isTokenChar(c) ? 2 : 0) | (c === 61 || c === 58 ? 4 : 0));

/**
 * Whether maskTextFully could change the text, from one look at each character: a card number
 * needs MIN_CARD_DIGITS digits, a secret name's value an `=` or `:` after the name, a token or a
 * path segment a run of MIN_TOKEN_LENGTH token characters. Most of what an e-mail shows (titles,
 * summaries, hosts, tags, ports) has none of them, and this look costs a fraction of the full
 * scan's (which judges every word).
 */
export function mayHoldSecret(text: string): boolean {
  let digits = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const kind = c < 128 ? CHARACTER_KINDS[c]! : 0;
    if (kind & 4) return true;
    if (kind & 2) {
      if (++run >= MIN_TOKEN_LENGTH) return true;
    } else {
      run = 0;
    }
    if (kind & 1 && ++digits >= MIN_CARD_DIGITS) return true;
  }
  return false;
}

/**
 * Masks what free text shows of secrets: card numbers, high-entropy words, and the value after a
 * secret name followed by `=` or `:` (`password=hunter2`, `"token": "…"`, `Authorization: Bearer …`).
 */
export function maskText(text: string): string {
  return mayHoldSecret(text) ? maskTextFully(text) : text;
}

/** maskText's scan, of every word: what maskText does to a text that mayHoldSecret lets through. */
export function maskTextFully(text: string): string {
  const out: string[] = [];
  let copied = 0;
  let i = 0;
  // A run of digit groups that is no card number is judged once, not again from each of its groups.
  let judgedUntil = 0;
  const replace = (start: number, end: number, replacement: string) => {
    if (start > copied) out.push(text.slice(copied, start));
    out.push(replacement);
    copied = end;
  };
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (i >= judgedUntil && isDigit(c) && (i === 0 || !isAlnum(text.charCodeAt(i - 1)))) {
      const run = digitRun(text, i);
      judgedUntil = run.end;
      if (run.card) {
        replace(i, run.end, `•••• ${run.digits.slice(-4)}`);
        i = run.end;
        continue;
      }
    }
    if (!isTokenChar(c)) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && isTokenChar(text.charCodeAt(end))) end++;
    // The separator is cheap to look for; the name is judged only in front of one (and the word
    // copied out only to be judged: most are neither names nor long enough to be tokens).
    const valueStart = separatorAfter(text, end);
    if (valueStart >= 0 && isSecretName(text.slice(i, end))) {
      const value = valueFrom(text, valueStart);
      if (value) {
        replace(value.start, value.end, maskSecret(text.slice(value.start, value.end)));
        i = value.end;
        continue;
      }
    }
    if (end - i >= MIN_TOKEN_LENGTH) {
      const slash = i > 0 && text.charCodeAt(i - 1) === 46 ? slashWithin(text, i, end) : -1;
      if (slash >= 0) {
        maskPathSegments(text, slash + 1, end, replace);
      } else {
        const word = text.slice(i, end);
        if (isHighEntropy(word)) replace(i, end, maskSecret(word));
      }
    }
    i = end;
  }
  if (copied === 0) return text;
  if (copied < text.length) out.push(text.slice(copied));
  return out.join('');
}

/** The first `/` of text[from, end), or -1: looked for within a word only, so each character is read once. */
function slashWithin(text: string, from: number, end: number): number {
  for (let i = from; i < end; i++) if (text.charCodeAt(i) === 47) return i;
  return -1;
}

/**
 * The path after a host (`example.com/findings/3f2b8c1e-…`: the word starts after a dot and holds a
 * slash), its segments judged one by one: judged whole, a finding's own link, an ordinary path
 * ending in a UUID or a long id, read as a token and the e-mail's link to the finding was broken.
 * A segment that is a token itself (a webhook's secret) is still masked.
 */
function maskPathSegments(text: string, from: number, end: number, replace: (start: number, end: number, replacement: string) => void): void {
  let start = from;
  while (start < end) {
    const slash = slashWithin(text, start, end);
    const stop = slash < 0 ? end : slash;
    if (stop - start >= MIN_TOKEN_LENGTH) {
      const segment = text.slice(start, stop);
      if (isHighEntropy(segment)) replace(start, stop, maskSecret(segment));
    }
    start = stop + 1;
  }
}

/** Where a value starts after a name + optional quote + `=` or `:` (+ spaces, optional quote); -1 without a separator. */
function separatorAfter(text: string, from: number): number {
  let i = from;
  if (text.charCodeAt(i) === 34 || text.charCodeAt(i) === 39) i++;
  while (text.charCodeAt(i) === 32) i++;
  const sep = text.charCodeAt(i);
  if (sep !== 61 && sep !== 58) return -1;
  i++;
  while (text.charCodeAt(i) === 32) i++;
  if (text.charCodeAt(i) === 34 || text.charCodeAt(i) === 39) i++;
  return i;
}

/** The value starting at `from`; after a `Bearer`/`Basic` scheme word, the credential that follows it. */
function valueFrom(text: string, from: number): { start: number; end: number } | undefined {
  let start = from;
  let i = from;
  while (i < text.length && !endsValue(text.charCodeAt(i))) i++;
  const scheme = text.slice(start, i).toLowerCase();
  if ((scheme === 'bearer' || scheme === 'basic') && text.charCodeAt(i) === 32) {
    // The scheme says what kind of credential it is; the credential is what follows.
    start = ++i;
    while (i < text.length && !endsValue(text.charCodeAt(i))) i++;
  }
  return i === start ? undefined : { start, end: i };
}

/** Nodes of one event's data that are looked at; what lies beyond is not shown either (the row is cut at 300 characters). */
const DATA_NODE_BUDGET = 2000;
const DATA_DEPTH = 16;
const OMITTED = '…';

/**
 * A copy of event data fit for an e-mail: under a secret-named key every value is masked whole, at
 * any depth; elsewhere strings (and numbers, which may be card numbers) are masked by shape.
 */
export function maskData(value: unknown, secret = false, budget = { nodes: DATA_NODE_BUDGET }, depth = 0): unknown {
  if (--budget.nodes < 0 || depth > DATA_DEPTH) return OMITTED;
  if (typeof value === 'string') return secret ? maskSecret(value) : maskText(value);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const text = String(value);
    if (secret) return maskSecret(text);
    const masked = maskText(text);
    return masked === text ? value : masked;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      if (budget.nodes <= 0) {
        items.push(OMITTED);
        break;
      }
      items.push(maskData(item, secret, budget, depth + 1));
    }
    return items;
  }
  // No prototype: a `__proto__` key is copied as data rather than replacing the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (budget.nodes <= 0) {
      copy[OMITTED] = OMITTED;
      break;
    }
    copy[maskText(key)] = maskData((value as Record<string, unknown>)[key], secret || isSecretName(key), budget, depth + 1);
  }
  return copy;
}

/**
 * The first `limit` entries of an object's data, masked: the entries of maskData's copy of them, in
 * its order, without the copy: a copy without a prototype is a dictionary to V8, slow to list again
 * for the e-mail's rows, and copying the entries into an object first costs as much again.
 */
export function maskDataEntries(data: object, limit: number): Array<[string, unknown]> {
  // The object itself is a node, as maskData counts it.
  const budget = { nodes: DATA_NODE_BUDGET - 1 };
  // Keys masked alike are one entry, at the first one's place with the last one's value, as in the copy.
  const masked = new Map<string, unknown>();
  const keys = Object.keys(data);
  for (let i = 0; i < keys.length && i < limit; i++) {
    if (budget.nodes <= 0) {
      masked.set(OMITTED, OMITTED);
      break;
    }
    const key = keys[i]!;
    masked.set(maskText(key), maskData((data as Record<string, unknown>)[key], isSecretName(key), budget, 1));
  }
  return [...masked];
}

/** An event as an e-mail may show it (maskEvent): its data as masked entries, null for data that is not an object. */
export type MaskedEvent = Omit<EventDetails, 'data'> & { data: Array<[string, unknown]> | null };

/** The event as an e-mail may show it; `listed.tags` and `listed.data` bound the work to what is shown. */
export function maskEvent(event: EventDetails, listed: { tags: number; data: number }): MaskedEvent {
  const data = event.data && typeof event.data === 'object' ? maskDataEntries(event.data, listed.data) : null;
  return {
    ...event,
    title: maskText(event.title),
    summary: event.summary === null ? null : maskText(event.summary),
    url: event.url === null ? null : maskText(event.url),
    tags: Array.isArray(event.tags) ? event.tags.slice(0, listed.tags).map((tag) => maskText(String(tag))) : event.tags,
    data,
  };
}
