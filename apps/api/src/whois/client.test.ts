import { describe, expect, it } from 'vitest';
import { findReferral, isPrivateAddress } from './client';

describe('isPrivateAddress', () => {
  it.each([
    // IPv4: this network, private, shared (CGNAT), loopback, link-local, IETF, documentation, benchmarking, multicast, reserved, broadcast.
    '0.0.0.0', '0.1.2.3', '10.0.0.1', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.254', '169.254.169.254',
    '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.19.255.255',
    '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
    // IPv6: unspecified, loopback, IPv4-compatible, discard, ULA, link-local (with a zone), site-local, multicast, documentation, Teredo.
    '::', '::1', '::7f00:1', '::127.0.0.1', '::a00:1', '100::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0',
    'fec0::1', 'feff::1', 'ff02::1', '2001:db8::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '64:ff9b:1::1', '3fff::1',
    // IPv4 inside IPv6: mapped (dotted and hex), NAT64, 6to4.
    '::ffff:127.0.0.1', '::FFFF:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '0:0:0:0:0:ffff:c0a8:101',
    '64:ff9b::127.0.0.1', '64:ff9b::a00:1', '64:ff9b::c0a8:101', '2002:7f00:1::', '2002:a00:1::1', '2002:c0a8:101:1::1', '2002:a9fe:a9fe::',
  ])('%s is private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8', '1.1.1.1', '192.0.32.8', '199.7.59.74', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '223.255.255.255',
    '2001:500:8f::53', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('findReferral on hostile answers', () => {
  const current = { host: 'whois.example', port: 43 };
  const cpuMs = (run: () => void) => {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };

  // The former patterns took seconds on these (a regex that backtracked over a run of slashes);
  // 500 ms is generous on a busy machine and far below what the quadratic cost was.
  it.each([
    ['a run of slashes', `Registrar WHOIS Server: whois://${'/'.repeat(256 * 1024)}x`],
    ['a run of spaces before the colon', `Registrar WHOIS Server${' '.repeat(256 * 1024)}x`],
    ['many short lines', 'whois:\n'.repeat(40_000)],
  ])('reads %s in bounded time', (_name, text) => {
    let referral: unknown;
    expect(cpuMs(() => (referral = findReferral(text, current)))).toBeLessThan(500);
    expect(referral).toBeNull();
  });
});
