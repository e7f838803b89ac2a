import { describe, expect, it } from 'vitest';
import { domainMessages, normalizeDomain } from './domain';

describe('normalizeDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    [' EXAMPLE.com. ', 'example.com'],
    ['www.mail.example.com', 'example.com'],
    ['www.example.co.uk', 'example.co.uk'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['user.github.io', 'github.io'],
    ['host.corp.internal', 'corp.internal'],
    ['a-b.example', 'a-b.example'],
  ])('%j → %j', (input, domain) => expect(normalizeDomain(input)).toEqual({ ok: true, domain }));

  it.each([
    ['192.0.2.1', domainMessages.ip],
    ['2001:db8::1', domainMessages.ip],
    ['[2001:db8::1]', domainMessages.ip],
    ['::ffff:192.0.2.1', domainMessages.ip],
    ['', domainMessages.blank],
    ['   ', domainMessages.blank],
    ['localhost', domainMessages.invalid],
    ['not a domain', domainMessages.invalid],
    ['http://example.com', domainMessages.invalid],
    ['example.com/path', domainMessages.invalid],
    ['user@example.com', domainMessages.invalid],
    ['*.example.com', domainMessages.invalid],
    ['a_b.example.com', domainMessages.invalid],
    ['-a.example.com', domainMessages.invalid],
    ['a..example.com', domainMessages.invalid],
    ['192.0.2.300', domainMessages.invalid],
    [`${'a'.repeat(64)}.com`, domainMessages.invalid],
    [`${'a.'.repeat(130)}com`, domainMessages.invalid],
    ['co.uk', domainMessages.publicSuffix('co.uk')],
  ])('refuses %j', (input, message) => expect(normalizeDomain(input)).toEqual({ ok: false, message }));
});
