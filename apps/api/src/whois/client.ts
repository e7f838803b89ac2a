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
   * Referrals come from remote answers, so they are not trusted to lead into private address
   * space (loopback, RFC 1918, link-local …) unless the configured server is there too
   * (`same-network`, the default: test and air-gapped setups). `deny` refuses them always.
   */
  privateReferrals?: 'same-network' | 'deny';
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

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Loopback, private, shared, link-local, multicast or reserved: nothing a public WHOIS server lives at. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return PRIVATE.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

type Referral = { kind: 'directory' | 'registrar'; server: WhoisServerAddress };

const REFERRAL = /^\s*(refer|whois|registrar whois server|whois server)\s*:\s*(\S*)/i;

/** The first referral in an answer to a server other than `current`. */
export function findReferral(text: string, current: WhoisServerAddress): Referral | null {
  for (const line of text.split(/\r?\n|\r/)) {
    const match = REFERRAL.exec(line);
    if (!match) continue;
    let value = match[2] ?? '';
    // whois://host[:port] is a WHOIS server; http(s):// and rwhois:// are other protocols.
    if (/^whois:\/\//i.test(value)) value = value.slice('whois://'.length).replace(/\/+$/, '');
    else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
    const server = value === '' ? null : parseWhoisServer(value);
    if (!server || (server.host === current.host && server.port === current.port)) continue;
    const key = (match[1] ?? '').toLowerCase();
    return { kind: key === 'refer' || key === 'whois' ? 'directory' : 'registrar', server };
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
  remoteAddress: string;
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
    let privateAllowed = true;
    for (;;) {
      let result: QueryResult;
      try {
        result = await this.query(server, domain, deadline, privateAllowed);
      } catch (error) {
        // A registrar that fails leaves the registry's answer standing.
        if (answers.length === 0) throw error;
        return { domain, answers, complete: false };
      }
      if (via === 'start') {
        privateAllowed = this.options.privateReferrals !== 'deny' && isPrivateAddress(result.remoteAddress);
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

  /** One RFC 3912 exchange, within what is left of the deadline. */
  private async query(server: WhoisServerAddress, query: string, deadline: number, privateAllowed: boolean): Promise<QueryResult> {
    const label = serverLabel(server);
    const timeout = () => new WhoisError('timeout', `WHOIS server ${label} did not answer in time`, label);
    if (Date.now() >= deadline) throw timeout();
    const address = await this.resolve(server, deadline, privateAllowed, label, timeout);
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
        else resolve({ text: decode(Buffer.concat(chunks)), remoteAddress: address });
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

  private async resolve(server: WhoisServerAddress, deadline: number, privateAllowed: boolean, label: string, timeout: () => WhoisError): Promise<string> {
    const refuse = () => new WhoisError('unavailable', `WHOIS server ${label} is in private address space`, label);
    if (isIP(server.host) !== 0) {
      if (!privateAllowed && isPrivateAddress(server.host)) throw refuse();
      return server.host;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const addresses = await Promise.race([
        dnsLookup(server.host, { all: true }),
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
