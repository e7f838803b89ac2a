import { describe, expect, it } from 'vitest';
import { DENIC, hostileWhoisAnswers, ianaAnswer, JPRS, markmonitorAnswer, NOMINET, TCINET, verisignAnswer, verisignNoMatch } from '../../../../test/support/whois-records';
import { mergeWhoisRecords, parseWhois, parseWhoisDate, readPairs } from './parse';

describe('parseWhois', () => {
  it('reads a registry record in ICANN format (Verisign)', () => {
    expect(parseWhois(verisignAnswer('google.com', 'whois.markmonitor.com'), 'google.com')).toEqual({
      domain_name: 'google.com',
      registrar: 'MarkMonitor Inc.',
      registrar_url: 'http://www.markmonitor.com',
      creation_date: '1997-09-15T04:00:00.000Z',
      updated_date: '2019-09-09T15:39:04.000Z',
      expiration_date: '2028-09-14T04:00:00.000Z',
      name_servers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited', 'serverDeleteProhibited'],
      dnssec: 'unsigned',
      registrant: null,
    });
  });

  it('reads a registrar record with its registrant', () => {
    const record = parseWhois(markmonitorAnswer('google.com'), 'google.com');
    expect(record).toMatchObject({
      domain_name: 'google.com',
      registrar: 'MarkMonitor, Inc.',
      creation_date: '1997-09-15T07:00:00.000Z',
      expiration_date: '2028-09-13T07:00:00.000Z',
      status: ['clientUpdateProhibited', 'clientTransferProhibited', 'clientDeleteProhibited'],
      name_servers: ['ns1.google.com', 'ns4.google.com', 'ns3.google.com', 'ns2.google.com'],
    });
    expect(record?.registrant).toEqual({
      name: 'REDACTED FOR PRIVACY',
      organization: 'Google LLC',
      street: 'REDACTED FOR PRIVACY',
      city: 'REDACTED FOR PRIVACY',
      state_province: 'CA',
      postal_code: 'REDACTED FOR PRIVACY',
      country: 'US',
      email: 'Select Request Email Form at https://domains.markmonitor.com/whois/google.com',
      phone: 'REDACTED FOR PRIVACY',
    });
  });

  it("reads Nominet's indented blocks", () => {
    expect(parseWhois(NOMINET, 'google.co.uk')).toEqual({
      domain_name: 'google.co.uk',
      registrar: 'Markmonitor Inc. t/a MarkMonitor Inc. [Tag = MARKMONITOR]',
      registrar_url: null,
      creation_date: '1999-02-14T00:00:00.000Z',
      updated_date: '2025-01-13T00:00:00.000Z',
      expiration_date: '2026-02-14T00:00:00.000Z',
      name_servers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      status: ['Registered until expiry date.'],
      dnssec: null,
      registrant: null,
    });
  });

  it('reads DENIC, JPRS and RIPE-style records', () => {
    expect(parseWhois(DENIC, 'google.de')).toMatchObject({
      domain_name: 'google.de',
      updated_date: '2018-03-12T20:44:25.000Z',
      creation_date: null,
      name_servers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      status: ['connect'],
    });
    expect(parseWhois(JPRS, 'google.jp')).toMatchObject({
      domain_name: 'google.jp',
      creation_date: '2001-03-22T00:00:00.000Z',
      updated_date: '2025-05-31T16:05:03.000Z',
      name_servers: ['ns1.google.com', 'ns2.google.com'],
      status: ['Connected (2026/05/31)'],
    });
    expect(parseWhois(TCINET, 'google.ru')).toMatchObject({
      domain_name: 'google.ru',
      registrar: 'RU-CENTER-RU',
      creation_date: '2004-03-03T21:00:00.000Z',
      expiration_date: '2025-03-04T21:00:00.000Z',
      name_servers: ['ns1.google.com', 'ns2.google.com'],
      status: ['REGISTERED', 'DELEGATED', 'VERIFIED'],
      registrant: expect.objectContaining({ organization: 'Google LLC', name: null }),
    });
  });

  it('is null for an answer without a record of the domain', () => {
    expect(parseWhois(verisignNoMatch('nope.com'), 'nope.com')).toBeNull();
    expect(parseWhois('', 'nope.com')).toBeNull();
    expect(parseWhois('% rate limit exceeded, try again later\n', 'nope.com')).toBeNull();
    // The directory's answer is about the TLD, not the domain.
    expect(parseWhois(ianaAnswer('whois.verisign-grs.com'), 'google.com')).toBeNull();
    expect(parseWhois(verisignAnswer('other.com', 'x'), 'google.com')).toBeNull();
  });

  it('stops at the legal text after ">>> … <<<"', () => {
    const pairs = readPairs(verisignAnswer('google.com', 'whois.markmonitor.com'));
    expect(pairs.has('terms of use')).toBe(false);
    expect(pairs.has('notice')).toBe(false);
    expect(pairs.get('domain status')).toHaveLength(4);
  });

  it('takes a name server line with its addresses as a value, not a key', () => {
    const pairs = readPairs('Name servers:\n    ns1.example.net 2001:db8::53\n    ns2.example.net\n');
    expect(pairs.get('name servers')).toEqual(['ns1.example.net 2001:db8::53', 'ns2.example.net']);
  });
});

describe('mergeWhoisRecords', () => {
  it("keeps the registry's fields and fills the gaps from the registrar", () => {
    const merged = mergeWhoisRecords([
      parseWhois(verisignAnswer('google.com', 'whois.markmonitor.com'), 'google.com'),
      parseWhois(markmonitorAnswer('google.com'), 'google.com'),
    ]);
    expect(merged).toMatchObject({
      registrar: 'MarkMonitor Inc.',
      expiration_date: '2028-09-14T04:00:00.000Z',
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited', 'serverDeleteProhibited'],
      registrant: expect.objectContaining({ organization: 'Google LLC', country: 'US' }),
    });
    expect(mergeWhoisRecords([null, null])).toBeNull();
    expect(mergeWhoisRecords([null, parseWhois(DENIC, 'google.de')])).toMatchObject({ domain_name: 'google.de' });
  });
});

describe('parseWhoisDate', () => {
  it.each([
    ['1997-09-15T04:00:00Z', '1997-09-15T04:00:00.000Z'],
    ['2028-09-13T07:00:00.000+00:00', '2028-09-13T07:00:00.000Z'],
    ['2019-09-09T15:39:04+0000', '2019-09-09T15:39:04.000Z'],
    ['2018-03-12T21:44:25+01:00', '2018-03-12T20:44:25.000Z'],
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02 03:04:05 UTC', '2024-01-02T03:04:05.000Z'],
    ['2005-05-30', '2005-05-30T00:00:00.000Z'],
    ['2025/06/01 01:05:03 (JST)', '2025-05-31T16:05:03.000Z'],
    ['14-Feb-1999', '1999-02-14T00:00:00.000Z'],
    ['14-feb-1999', '1999-02-14T00:00:00.000Z'],
    ['15.09.1997', '1997-09-15T00:00:00.000Z'],
    ['19970915', '1997-09-15T00:00:00.000Z'],
  ])('%s → %s', (text, iso) => expect(parseWhoisDate(text)).toBe(iso));

  it.each(['', 'never', '2024-02-30', '31-Foo-2024', '2024-13-01T00:00:00Z'])('refuses %j', (text) => expect(parseWhoisDate(text)).toBeNull());
});

describe('parseWhois on hostile answers', () => {
  // One line of 256 KiB with a run of spaces held the event loop for most of a minute with the
  // former patterns (see commit 605ed03).
  // The bound is generous (the parse takes a few ms; bench/hostile-input.ts has the figures) and
  // measured in CPU time, so a busy machine does not make it flaky.
  it.each(Object.entries(hostileWhoisAnswers()))('parses %s (256 KiB) in bounded time', (name, text) => {
    const start = process.cpuUsage();
    const record = parseWhois(text, 'example.com');
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(500);
    if (name === 'baseline_real_record') expect(record?.registrar).toBe('MarkMonitor, Inc.');
  });

  it('reads keys and values around long runs as before', () => {
    expect(readPairs(`Domain Status: ok${' '.repeat(1000)}, inactive   `).get('domain status')).toEqual([`ok${' '.repeat(1000)}, inactive`]);
    expect(parseWhois(`Domain Name: example.com\nDomain Status: ok ,${' '.repeat(1000)}inactive,,`, 'example.com')?.status).toEqual(['ok', 'inactive']);
    // A key is at most 60 characters; a longer "key" is no key.
    expect(readPairs(`a${' '.repeat(60)}b: c`).size).toBe(0);
    expect(readPairs(`a${' '.repeat(58)}b${' '.repeat(1000)}.....: c`).get(`a b`)).toEqual(['c']);
  });
});
