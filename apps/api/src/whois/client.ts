import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, connect, isIP } from 'node:net';

/**
 * A WHOIS client (RFC 3912): a TCP connection to port 43 (or the configured port), the
 * query and CRLF, then everything the server sends until it closes the connection.
 *
 * A lookup starts at the configured server and follows referrals the way registration data is
 * laid out: a directory's `refer:`/`whois:` (IANA: which registry runs the TLD), then a
 * registry's `Registrar WHOIS Server:` (thin registries such as Verisign's .com: which
 * registrar holds the record). At most those two hops; the registrar's answer naming itself
 * is not followed. The whole lookup shares one deadline.
 *
 * Written here rather than taken from npm: `whoiser` connects to port 43 only and drops the
 * port of referrals; `whois` (node-whois) follows an empty `Registrar WHOIS Server:` to
 * localhost, discards the registry's answer when the registrar fails, and times out per idle
 * socket rather than per lookup.
 */

export interface WhoisServerAddress {
  host: string;
  port: number;
}

export type WhoisErrorKind = 'timeout' | 'unavailable';

export class WhoisError extends Error {
  override name = 'WhoisError';
  constructor(
    readonly kind: WhoisErrorKind,
    message: string,
    readonly server: string,
  ) {
    super(message);
  }
}

/** One answer about the domain itself (directory answers about its TLD are left out). */
export interface WhoisAnswer {
  /** host, or host:port when the port is not 43. */
  server: string;
  text: string;
}

export interface WhoisLookup {
  domain: string;
  /** The registry's answer, then the registrar's when the registry referred to one. */
  answers: WhoisAnswer[];
  /** False when a referral could not be followed (the registrar was unreachable or too slow). */
  complete: boolean;
}

export interface WhoisClientOptions {
  server: WhoisServerAddress;
  /** Deadline of a whole lookup, every hop included. */
  timeoutMs: number;
  /** Larger answers are cut here (real records are a few kilobytes). */
  maxBytes?: number;
  /**
   * Referrals come from remote answers (any server of the chain, or whoever took over an expired
   * registrar's host name), so by default they are not followed into private address space
   * (loopback, RFC 1918, link-local, …, in any IPv4 or IPv6 form): true for air-gapped mirrors
   * whose registries are private too. The configured server is the operator's choice and is
   * always asked.
   */
  allowPrivate?: boolean;
  /** Resolves a referral's host name (tests hand in their own; default: the system resolver). */
  resolveHost?: (host: string) => Promise<LookupAddress[]>;
}

export const DEFAULT_WHOIS_PORT = 43;
const DEFAULT_MAX_BYTES = 256 * 1024;

/** `host`, `host:port`, `[v6]:port`; null when it is none of them. */
export function parseWhoisServer(text: string, defaultPort = DEFAULT_WHOIS_PORT): WhoisServerAddress | null {
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_.-]+))(?::(\d{1,5}))?$/i.exec(text.trim());
  if (!match) return null;
  const host = (match[1] ?? match[2] ?? '').toLowerCase();
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (host === '' || port < 1 || port > 65535) return null;
  if (match[1] !== undefined && isIP(host) !== 6) return null;
  return { host, port };
}

export function serverLabel(server: WhoisServerAddress): string {
  const host = isIP(server.host) === 6 ? `[${server.host}]` : server.host;
  return server.port === DEFAULT_WHOIS_PORT ? host : `${host}:${server.port}`;
}

const PRIVATE_IPV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE_IPV4.addSubnet(network, prefix, 'ipv4');

const PRIVATE_IPV6 = new BlockList();
for (const [network, prefix] of [
  // IPv4-compatible (deprecated; `::` and `::1` among them) and discard-only.
  ['::', 96], ['100::', 64],
  // Local-use NAT64, Teredo (its client address is obfuscated, so it cannot be checked), benchmarking, documentation.
  ['64:ff9b:1::', 48], ['2001::', 32], ['2001:2::', 48], ['2001:db8::', 32], ['3fff::', 20],
  // Unique local, link-local, site-local (deprecated), multicast.
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) PRIVATE_IPV6.addSubnet(network, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address that isIP() accepted (a zone `%eth0` is dropped). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.split('%')[0]!;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = groups(head);
  const right = groups(rest);
  const all = rest === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  return bytes;
}

const ipv4At = (bytes: Uint8Array, offset: number) => Array.from(bytes.subarray(offset, offset + 4)).join('.');
const startsWith = (bytes: Uint8Array, prefix: readonly number[]) => prefix.every((byte, index) => bytes[index] === byte);

/** The IPv4 address an IPv6 address carries and leads to: IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
function embeddedIpv4(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return ipv4At(bytes, 12);
  if (startsWith(bytes, [0x20, 0x02])) return ipv4At(bytes, 2);
  return null;
}

/**
 * Loopback, private, shared, link-local, multicast, documentation or reserved: nothing a public
 * WHOIS server lives at. IPv6 addresses that carry an IPv4 address are judged by it too, so
 * `::ffff:7f00:1`, `64:ff9b::a00:1` or `2002:c0a8:1::` are as private as 127.0.0.1, 10.0.0.1, 192.168.0.1.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return PRIVATE_IPV4.check(address, 'ipv4');
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  const ipv4 = embeddedIpv4(bytes);
  if (ipv4 !== null && PRIVATE_IPV4.check(ipv4, 'ipv4')) return true;
  const canonical = Array.from({ length: 8 }, (_, index) => ((bytes[index * 2]! << 8) | bytes[index * 2 + 1]!).toString(16)).join(':');
  return PRIVATE_IPV6.check(canonical, 'ipv6');
}

type Referral = { kind: 'directory' | 'registrar'; server: WhoisServerAddress };

const REFERRAL_KEYS: Record<string, Referral['kind']> = {
  refer: 'directory',
  whois: 'directory',
  'registrar whois server': 'registrar',
  'whois server': 'registrar',
};
/** `whois://` + a host name (253) + `:65535` + a few slashes: a longer value is no server address. */
const MAX_REFERRAL = 300;

/**
 * The first referral in an answer to a server other than `current`. Read by hand, in one pass
 * over each line: the answer comes from a remote server (see readPairs).
 */
export function findReferral(text: string, current: WhoisServerAddress): Referral | null {
  for (const line of text.split(/\r?\n|\r/)) {
    const start = line.length - line.trimStart().length;
    const colon = line.indexOf(':', start);
    if (colon < 0) continue;
    const kind = REFERRAL_KEYS[line.slice(start, colon).trimEnd().toLowerCase()];
    if (kind === undefined) continue;
    let value = line.slice(colon + 1).trimStart().split(/\s/, 1)[0] ?? '';
    if (value.length > MAX_REFERRAL) continue;
    // whois://host[:port] is a WHOIS server; http(s):// and rwhois:// are other protocols.
    if (/^whois:\/\//i.test(value)) {
      value = value.slice('whois://'.length);
      while (value.endsWith('/')) value = value.slice(0, -1);
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
    const server = value === '' ? null : parseWhoisServer(value);
    if (!server || (server.host === current.host && server.port === current.port)) continue;
    return { kind, server };
  }
  return null;
}

function decode(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Some registries still answer in Latin-1.
    return bytes.toString('latin1');
  }
}

interface QueryResult {
  text: string;
}

export class WhoisClient {
  private readonly maxBytes: number;

  constructor(private readonly options: WhoisClientOptions) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  async lookup(domain: string): Promise<WhoisLookup> {
    const deadline = Date.now() + this.options.timeoutMs;
    const answers: WhoisAnswer[] = [];
    let server = this.options.server;
    let via: 'start' | 'directory' | 'registrar' = 'start';
    for (;;) {
      let result: QueryResult;
      try {
        if (via !== 'start') this.checkReferralPort(server);
        result = await this.query(server, domain, deadline, via === 'start');
      } catch (error) {
        // A registrar that fails leaves the registry's answer standing.
        if (answers.length === 0) throw error;
        return { domain, answers, complete: false };
      }
      const referral = findReferral(result.text, server);
      if (referral?.kind === 'directory' && via === 'start') {
        server = referral.server;
        via = 'directory';
        continue;
      }
      answers.push({ server: serverLabel(server), text: result.text });
      if (referral?.kind === 'registrar' && via !== 'registrar') {
        server = referral.server;
        via = 'registrar';
        continue;
      }
      return { domain, answers, complete: true };
    }
  }

  /** WHOIS is port 43; a referral elsewhere (but to the configured server's port) points at some other service. */
  private checkReferralPort(server: WhoisServerAddress): void {
    const allowed = [DEFAULT_WHOIS_PORT, this.options.server.port];
    if (!allowed.includes(server.port)) {
      const label = serverLabel(server);
      throw new WhoisError('unavailable', `WHOIS referral to ${label} refused: only port ${[...new Set(allowed)].join(' or ')} is followed`, label);
    }
  }

  /** One RFC 3912 exchange, within what is left of the deadline. */
  private async query(server: WhoisServerAddress, query: string, deadline: number, configured: boolean): Promise<QueryResult> {
    const label = serverLabel(server);
    const timeout = () => new WhoisError('timeout', `WHOIS server ${label} did not answer in time`, label);
    if (Date.now() >= deadline) throw timeout();
    const address = await this.resolve(server, deadline, configured || this.options.allowPrivate === true, label, timeout);
    return new Promise<QueryResult>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const socket = connect({ host: address, port: server.port });
      const finish = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        if (error) reject(error);
        // Servers that refuse a client (rate limits, blocked addresses) often just close.
        else if (size === 0) reject(new WhoisError('unavailable', `WHOIS server ${label} closed the connection without an answer`, label));
        else resolve({ text: decode(Buffer.concat(chunks)) });
      };
      const timer = setTimeout(() => finish(timeout()), Math.max(0, deadline - Date.now()));
      socket.setNoDelay(true);
      socket.once('connect', () => socket.write(`${query}\r\n`));
      socket.on('data', (chunk: Buffer) => {
        const room = this.maxBytes - size;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        if (size >= this.maxBytes) finish();
      });
      socket.once('end', () => finish());
      socket.once('close', () => finish());
      socket.once('error', (error: NodeJS.ErrnoException) => {
        // Some servers reset the connection after the whole answer; what came is the answer.
        if (size > 0 && error.code === 'ECONNRESET') finish();
        else finish(new WhoisError('unavailable', `WHOIS server ${label} could not be reached: ${error.code ?? error.message}`, label));
      });
    });
  }

  /**
   * The address to connect to, checked: the connection goes to this very address, so a host name
   * whose DNS answer changes (rebinding) cannot lead past the check between check and connect.
   */
  private async resolve(server: WhoisServerAddress, deadline: number, privateAllowed: boolean, label: string, timeout: () => WhoisError): Promise<string> {
    const refuse = () => new WhoisError('unavailable', `WHOIS server ${label} is in private address space`, label);
    if (isIP(server.host) !== 0) {
      if (!privateAllowed && isPrivateAddress(server.host)) throw refuse();
      return server.host;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const addresses = await Promise.race([
        this.options.resolveHost ? this.options.resolveHost(server.host) : dnsLookup(server.host, { all: true }),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(timeout()), Math.max(0, deadline - Date.now()));
        }),
      ]);
      const usable = addresses.filter((entry) => privateAllowed || !isPrivateAddress(entry.address));
      if (usable.length === 0) throw addresses.length ? refuse() : new WhoisError('unavailable', `WHOIS server ${label} has no address`, label);
      return usable[0]!.address;
    } catch (error) {
      if (error instanceof WhoisError) throw error;
      throw new WhoisError('unavailable', `WHOIS server ${label} could not be resolved: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, label);
    } finally {
      clearTimeout(timer);
    }
  }
}
