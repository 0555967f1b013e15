/**
 * Expected values are the documented ranges themselves: RFC 1918 section 3 (private IPv4), RFC 6598 (shared
 * 100.64/10), RFC 3927 (link-local, where cloud metadata answers at 169.254.169.254), the IANA special-purpose
 * registries of RFC 6890 (https://www.iana.org/assignments/iana-ipv4-special-registry,
 * https://www.iana.org/assignments/iana-ipv6-special-registry), RFC 4193 (unique local fc00::/7), RFC 4291
 * section 2.5.5.2 (IPv4-mapped ::ffff:0:0/96) and RFC 6052 (64:ff9b::/96). Each edge is tested on both sides.
 */
import { describe, expect, it } from 'vitest';
import { formatRange, parseAddress, parseRange, refusedRangeOf } from './address-ranges.ts';

const isRefused = (address: string, allowed: string[] = []) =>
  refusedRangeOf(
    address,
    allowed.map((text) => parseRange(text) ?? { bytes: new Uint8Array(), prefix: 0 }),
  ) !== undefined;

describe('the ranges a user-chosen address may not reach', () => {
  it.each([
    // RFC 1918 section 3: 10/8, 172.16/12, 192.168/16, first and last address of each
    '10.0.0.0',
    '10.255.255.255',
    '172.16.0.0',
    '172.31.255.255',
    '192.168.0.0',
    '192.168.255.255',
    // loopback 127/8 (RFC 1122 section 3.2.1.3), "this network" 0/8
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    // link-local 169.254/16 (RFC 3927): the cloud metadata address
    '169.254.169.254',
    // shared address space 100.64/10 (RFC 6598): 100.64.0.0 to 100.127.255.255
    '100.64.0.0',
    '100.127.255.255',
    // RFC 6890's other non-global IPv4 entries, multicast and 240/4
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ])('refuses IPv4 %s', (address) => {
    expect(isRefused(address)).toBe(true);
  });

  it.each([
    // just outside each private or shared range
    '9.255.255.255',
    '11.0.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '223.255.255.255',
    // well-known public resolvers
    '8.8.8.8',
    '1.1.1.1',
  ])('lets IPv4 %s through', (address) => {
    expect(isRefused(address)).toBe(false);
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::', 'unique local, first (RFC 4193 section 3.1: fc00::/7)'],
    ['fd12:3456:789a:1::1', "unique local, RFC 4193 section 3.2's shape (L=1)"],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique local, last'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local, last /10'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation (RFC 3849)'],
    ['100::1', 'discard-only (RFC 6666)'],
    ['2002:7f00:1::', '6to4 (RFC 3056)'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:a00:1', 'IPv4-mapped 10.0.0.1'],
    ['::ffff:0:0', 'IPv4-mapped 0.0.0.0'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1 (RFC 6052)'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
  ])('refuses IPv6 %s (%s)', (address) => {
    expect(isRefused(address)).toBe(true);
  });

  it.each([
    ['2606:4700:4700::1111', 'a public resolver'],
    ['2001:4860:4860::8888', 'a public resolver'],
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'just below fc00::/7'],
    ['fe00::1', 'just below fe80::/10'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::808:808', 'NAT64 of 8.8.8.8'],
  ])('lets IPv6 %s through (%s)', (address) => {
    expect(isRefused(address)).toBe(false);
  });

  it('refuses what is not a standard address: odd spellings never reach the check unparsed', () => {
    for (const odd of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', 'localhost', '']) {
      expect(parseAddress(odd)).toBeUndefined();
      expect(isRefused(odd)).toBe(true);
    }
  });

  it('reads an IPv6 address with an IPv4 tail as the same bytes as its hex form (RFC 4291 section 2.2)', () => {
    expect(parseAddress('::ffff:127.0.0.1')).toEqual(parseAddress('::ffff:7f00:1'));
    expect([...(parseAddress('2001:db8::ff00:42:8329') ?? [])]).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0x00, 0x00, 0x42, 0x83, 0x29,
    ]);
  });
});

describe('ranges root allows', () => {
  it('lets an allowed range through, mapped forms included, and nothing beside it', () => {
    expect(isRefused('127.0.0.1', ['127.0.0.0/8'])).toBe(false);
    expect(isRefused('::ffff:127.0.0.1', ['127.0.0.0/8'])).toBe(false);
    expect(isRefused('127.0.0.2', ['127.0.0.1'])).toBe(true);
    expect(isRefused('10.0.0.1', ['127.0.0.0/8'])).toBe(true);
    expect(isRefused('fd00::5', ['fd00::/8'])).toBe(false);
    expect(isRefused('fe80::1', ['fd00::/8'])).toBe(true);
    expect(isRefused('172.20.1.2', ['172.20.0.0/16'])).toBe(false);
    expect(isRefused('172.21.1.2', ['172.20.0.0/16'])).toBe(true);
  });

  it('reads CIDR text, clearing host bits, and refuses what is not one', () => {
    const written = (text: string) => {
      const range = parseRange(text);
      return range && formatRange(range);
    };
    expect(written('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(written('10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(written('192.168.1.7')).toBe('192.168.1.7/32');
    expect(written('172.16.0.0/12')).toBe('172.16.0.0/12');
    expect(written('fd00::1/8')).toBe('fd00::/8');
    expect(written('2001:db8:0:0:1:0:0:1/128')).toBe('2001:db8::1:0:0:1/128');
    expect(written('::1')).toBe('::1/128');
    expect(written('fe80::/10')).toBe('fe80::/10');
    for (const bad of [
      '10.0.0.0/33',
      '300.1.1.1',
      'fd00::/129',
      '10.0.0.0/8/1',
      '10.0.0.0/-1',
      '10.0.0.0/',
      'ten/8',
      'example.com',
      '0x7f.1/8',
      'fe80::1%eth0/64',
    ])
      expect(parseRange(bad), bad).toBeUndefined();
  });
});
