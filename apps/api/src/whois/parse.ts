import { domainToASCII } from 'node:url';

export interface WhoisRegistrant {
  name: string | null;
  organization: string | null;
  street: string | null;
  city: string | null;
  state_province: string | null;
  postal_code: string | null;
  country: string | null;
  email: string | null;
  phone: string | null;
}

/** The fields of a WHOIS record that most registries and registrars publish. Dates are ISO 8601 (UTC). */
export interface WhoisRecord {
  domain_name: string | null;
  registrar: string | null;
  registrar_url: string | null;
  creation_date: string | null;
  updated_date: string | null;
  expiration_date: string | null;
  name_servers: string[];
  status: string[];
  dnssec: string | null;
  registrant: WhoisRegistrant | null;
}

/**
 * Keys as they are written in the wild, lower-cased, most authoritative first: ICANN's
 * registration data format (Verisign, PIR, registrars), RIPE-style ccTLDs (`nserver`,
 * `paid-till`), Nominet's indented blocks and JPRS's `[Key]` lines.
 */
const KEYS = {
  domain_name: ['domain name', 'domain', 'domainname', 'domain_name'],
  registrar: ['registrar', 'sponsoring registrar', 'registrar name', 'registrar organization', 'registrar organisation'],
  registrar_url: ['registrar url', 'referral url'],
  creation_date: [
    'creation date', 'created', 'created on', 'created date', 'registered on', 'registered', 'registration date',
    'registration time', 'registered date', 'domain registration date', 'domain create date', 'create date', 'record created',
  ],
  updated_date: [
    'updated date', 'last updated', 'last updated on', 'updated', 'last update', 'last modified', 'modified', 'changed',
    'update date', 'domain last updated date', 'last-update', 'record last updated on',
  ],
  expiration_date: [
    'registry expiry date', 'registrar registration expiration date', 'expiration date', 'expiry date', 'expires',
    'expires on', 'expire date', 'expiration time', 'paid-till', 'renewal date', 'domain expiration date', 'expiry',
    'record expires on',
  ],
  name_servers: ['name server', 'name servers', 'nameserver', 'nameservers', 'nserver', 'name server(s)'],
  status: ['domain status', 'status', 'state', 'registration status', 'domain state'],
  dnssec: ['dnssec'],
} as const;

const REGISTRANT_KEYS: Record<keyof WhoisRegistrant, readonly string[]> = {
  name: ['registrant name', 'registrant'],
  organization: ['registrant organization', 'registrant organisation', 'org'],
  street: ['registrant street', 'registrant address'],
  city: ['registrant city'],
  state_province: ['registrant state/province', 'registrant state', 'registrant province'],
  postal_code: ['registrant postal code', 'registrant zip'],
  country: ['registrant country', 'registrant country code'],
  email: ['registrant email', 'registrant e-mail'],
  phone: ['registrant phone', 'registrant phone number'],
};

/** `Domain Name....: x` and `Domain Name: x` read the same (keys are at most MAX_KEY characters). */
function normalizeKey(key: string): string {
  return key.trim().replace(/[\s.]+$/, '').replace(/\s+/g, ' ').toLowerCase();
}

// Lines are read by hand rather than with regular expressions: an answer is up to 256 KiB from any
// server of the referral chain, and a pattern such as `(.*?)\s*$` backtracks quadratically on a
// long line (one 256 KiB line with a run of spaces held the event loop for most of a minute: see
// commit 605ed03). Every scan below looks at each character a bounded number of times.

const MAX_KEY = 60;

/** What `\s` matches: Unicode white space and line terminators. */
function isSpace(code: number): boolean {
  return (
    code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}
const isLetter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
const isDigit = (code: number) => code >= 48 && code <= 57;
/** Letters, digits and ` /()&'_-`: no dot, so `ns1.example.net 2001:db8::53` is a value, not a key. */
const isKeyCharacter = (code: number) => isLetter(code) || isDigit(code) || " /()&'_-".includes(String.fromCharCode(code));

interface Pair {
  key: string;
  value: string;
}

/** `Key: value`, `Domain Name.....: value`; `start` is the first character after the indentation. */
function keyColonValue(line: string, start: number): Pair | null {
  if (!isLetter(line.charCodeAt(start))) return null;
  const colon = line.indexOf(':', start);
  if (colon < 0) return null;
  let end = colon;
  while (end > start && (line.charCodeAt(end - 1) === 46 || isSpace(line.charCodeAt(end - 1)))) end--;
  if (end - start > MAX_KEY) return null;
  for (let i = start; i < end; i++) if (!isKeyCharacter(line.charCodeAt(i))) return null;
  return { key: line.slice(start, end), value: line.slice(colon + 1).trim() };
}

/** JPRS: `[Domain Name]  EXAMPLE.JP`, `a. [Domain Name]  EXAMPLE.JP`. */
function bracketedKey(line: string, start: number): Pair | null {
  let open = start;
  if (isLetter(line.charCodeAt(open)) && line.charCodeAt(open + 1) === 46) {
    open += 2;
    while (open < line.length && isSpace(line.charCodeAt(open))) open++;
  }
  if (line.charCodeAt(open) !== 91) return null;
  const close = line.slice(open + 1, open + 2 + MAX_KEY).indexOf(']');
  if (close < 1) return null;
  return { key: line.slice(open + 1, open + 1 + close), value: line.slice(open + 2 + close).trim() };
}

/** Every key with its values in order; comments, blank lines and the legal text after `>>> … <<<` are left out. */
export function readPairs(text: string): Map<string, string[]> {
  const pairs = new Map<string, string[]>();
  const add = (key: string, value: string) => {
    const values = pairs.get(key);
    if (values) values.push(value);
    else pairs.set(key, [value]);
  };
  // A key without a value on its line takes the more indented lines that follow (Nominet's blocks).
  let block: { key: string; indent: number } | null = null;
  for (const line of text.split(/\r?\n|\r/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith('>>>')) break;
    if (trimmed === '' || trimmed.startsWith('%') || trimmed.startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    if (block && indent <= block.indent) block = null;
    // A URL is a value, not a key named "http".
    const head = trimmed.slice(0, 8).toLowerCase();
    const pair = head.startsWith('http://') || head.startsWith('https://') ? null : (keyColonValue(line, indent) ?? bracketedKey(line, indent));
    if (pair) {
      const key = normalizeKey(pair.key);
      if (pair.value !== '') add(key, pair.value);
      else if (!block) block = { key, indent };
      continue;
    }
    if (block) add(block.key, trimmed);
  }
  return pairs;
}

function firstOf(pairs: Map<string, string[]>, keys: readonly string[]): string[] | undefined {
  for (const key of keys) {
    const values = pairs.get(key);
    if (values?.length) return values;
  }
  return undefined;
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };

function isoFrom(year: number, month: number, day: number, time = '00:00:00', zone = 'Z'): string | null {
  const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T${time}${zone}`;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Reject what Date rolls over (31-Feb → 3-Mar).
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  return date.toISOString();
}

function zoneOf(text: string | undefined): string {
  if (!text || /^(?:z|utc|gmt)$/i.test(text)) return 'Z';
  const match = /^([+-])(\d{2}):?(\d{2})?$/.exec(text);
  return match ? `${match[1]}${match[2]}:${match[3] ?? '00'}` : 'Z';
}

/** The dates registries write, as ISO 8601 in UTC; null when the text is not a date it knows. */
export function parseWhoisDate(raw: string): string | null {
  const text = raw.trim();
  // 1997-09-15T04:00:00Z, 2028-09-13T07:00:00.000+00:00, 2019-01-11 12:45:01 (UTC+0), 2005-05-30
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(\.\d+)?)?\s*\(?\s*(?:UTC|GMT)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?/i.exec(text);
  if (m) {
    const time = `${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[7] ? m[7].slice(0, 4).padEnd(4, '0') : ''}`;
    return isoFrom(Number(m[1]), Number(m[2]), Number(m[3]), time, zoneOf(m[8]));
  }
  // JPRS: 2005/05/30, 2025/06/01 01:05:03 (JST)
  m = /^(\d{4})\/(\d{2})\/(\d{2})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?)?\s*(\(JST\))?/i.exec(text);
  if (m) return isoFrom(Number(m[1]), Number(m[2]), Number(m[3]), `${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}`, m[7] ? '+09:00' : 'Z');
  // Nominet and older registrars: 14-Feb-1999, 14-feb-1999 12:00:00
  m = /^(\d{1,2})[- ]([a-z]{3})[a-z]*[- ](\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?)?/i.exec(text);
  if (m) {
    const month = MONTHS[(m[2] ?? '').toLowerCase()];
    return month ? isoFrom(Number(m[3]), month, Number(m[1]), `${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}`) : null;
  }
  // 15.09.1997 (day first, as written in Europe)
  m = /^(\d{2})\.(\d{2})\.(\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (m) return isoFrom(Number(m[3]), Number(m[2]), Number(m[1]), `${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}`);
  // 19970915
  m = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  if (m) return isoFrom(Number(m[1]), Number(m[2]), Number(m[3]));
  return null;
}

function nameServer(value: string): string | null {
  const host = value.split(/\s+/)[0]?.replace(/\.$/, '').toLowerCase() ?? '';
  return /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)+$/.test(host) ? host : null;
}

/** `clientTransferProhibited https://icann.org/epp#…` → the code; other registries' words as written. */
function statuses(values: readonly string[]): string[] {
  return values.flatMap((value) => {
    const [code, link] = value.split(/\s+/, 2);
    if (code && link && /^\(?https?:\/\//i.test(link)) return [code];
    return value.split(',').map((part) => part.trim()).filter(Boolean);
  });
}

const unique = (values: Array<string | null>) => [...new Set(values.filter((value): value is string => value !== null))];

function sameDomain(found: string, domain: string): boolean {
  const name = found.trim().replace(/\.$/, '').toLowerCase();
  return name === domain || domainToASCII(name) === domain;
}

/**
 * The record's fields, or null when the text holds no recognizable record of `domain`
 * (an answer such as `No match for "EXAMPLE.COM".`, or one about another name).
 */
export function parseWhois(text: string, domain: string): WhoisRecord | null {
  const pairs = readPairs(text);
  const one = (keys: readonly string[]) => firstOf(pairs, keys)?.[0] ?? null;
  const domainName = one(KEYS.domain_name);
  if (domainName !== null && !sameDomain(domainName, domain)) return null;
  const date = (keys: readonly string[]) => {
    const value = one(keys);
    return value === null ? null : parseWhoisDate(value);
  };
  const registrant: WhoisRegistrant = {
    name: one(REGISTRANT_KEYS.name),
    organization: one(REGISTRANT_KEYS.organization),
    street: firstOf(pairs, REGISTRANT_KEYS.street)?.join(', ') ?? null,
    city: one(REGISTRANT_KEYS.city),
    state_province: one(REGISTRANT_KEYS.state_province),
    postal_code: one(REGISTRANT_KEYS.postal_code),
    country: one(REGISTRANT_KEYS.country),
    email: one(REGISTRANT_KEYS.email),
    phone: one(REGISTRANT_KEYS.phone),
  };
  const record: WhoisRecord = {
    domain_name: domainName === null ? null : domainName.replace(/\.$/, '').toLowerCase(),
    registrar: one(KEYS.registrar),
    registrar_url: one(KEYS.registrar_url),
    creation_date: date(KEYS.creation_date),
    updated_date: date(KEYS.updated_date),
    expiration_date: date(KEYS.expiration_date),
    name_servers: unique((firstOf(pairs, KEYS.name_servers) ?? []).map(nameServer)),
    status: unique(statuses(firstOf(pairs, KEYS.status) ?? [])),
    dnssec: one(KEYS.dnssec),
    registrant: Object.values(registrant).some((value) => value !== null) ? registrant : null,
  };
  const found =
    record.domain_name !== null ||
    record.registrar !== null ||
    record.creation_date !== null ||
    record.expiration_date !== null ||
    record.name_servers.length > 0;
  return found ? record : null;
}

/** Records of one domain from several servers (registry, then registrar): the first to give a field wins. */
export function mergeWhoisRecords(records: ReadonlyArray<WhoisRecord | null>): WhoisRecord | null {
  const present = records.filter((record): record is WhoisRecord => record !== null);
  const [first, ...rest] = present;
  if (!first) return null;
  const merged: WhoisRecord = { ...first, registrant: first.registrant ? { ...first.registrant } : null };
  for (const record of rest) {
    for (const key of ['domain_name', 'registrar', 'registrar_url', 'creation_date', 'updated_date', 'expiration_date', 'dnssec'] as const) {
      merged[key] ??= record[key];
    }
    if (merged.name_servers.length === 0) merged.name_servers = record.name_servers;
    if (merged.status.length === 0) merged.status = record.status;
    if (record.registrant) {
      const registrant: WhoisRegistrant = merged.registrant ?? { ...record.registrant };
      for (const key of Object.keys(record.registrant) as Array<keyof WhoisRegistrant>) registrant[key] ??= record.registrant[key];
      merged.registrant = registrant;
    }
  }
  return merged;
}
