import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';

export type DomainCheck = { ok: true; domain: string } | { ok: false; message: string };

export const domainMessages = {
  blank: 'This field may not be blank.',
  invalid: 'Enter a valid domain name.',
  ip: 'Enter a domain name, not an IP address.',
  publicSuffix: (domain: string) => `"${domain}" is a public suffix, not a registrable domain name.`,
} as const;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_INPUT = 1024;

/**
 * The domain a WHOIS lookup asks about: lower case, internationalized names in their ASCII
 * (punycode) form, and reduced to the registrable domain (`www.example.co.uk` →
 * `example.co.uk`, by the public suffix list), since registries hold records for those only.
 * IP addresses and anything that is not a host name are refused.
 */
export function normalizeDomain(input: string): DomainCheck {
  let text = input.trim();
  if (text === '') return { ok: false, message: domainMessages.blank };
  if (text.length > MAX_INPUT) return { ok: false, message: domainMessages.invalid };
  const bracketed = /^\[(.*)\]$/.exec(text)?.[1];
  if (isIP(bracketed ?? text) !== 0) return { ok: false, message: domainMessages.ip };
  if (text.endsWith('.')) text = text.slice(0, -1);
  // Refused before the IDN conversion, which would accept URL syntax such as "user@host".
  if (/[\s/\\@:?#%[\]*]/.test(text)) return { ok: false, message: domainMessages.invalid };
  const ascii = domainToASCII(text.toLowerCase());
  if (ascii === '' || ascii.length > 253) return { ok: false, message: domainMessages.invalid };
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return { ok: false, message: domainMessages.invalid };
  // 192.0.2.300 is not an address, and no top-level domain is numeric.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return { ok: false, message: domainMessages.invalid };
  const registrable = getDomain(ascii, { allowPrivateDomains: false, extractHostname: false });
  if (!registrable) return { ok: false, message: domainMessages.publicSuffix(ascii) };
  return { ok: true, domain: registrable };
}
