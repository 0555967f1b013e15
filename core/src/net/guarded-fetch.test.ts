/**
 * The save-time check of a user's address. The odd IPv4 spellings are those the WHATWG URL standard's IPv4 parser
 * reads as numbers (https://url.spec.whatwg.org/#concept-ipv4-parser: decimal, octal with a leading 0, hex with
 * 0x, and fewer than four parts), which is why they all name 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { parseRange } from './address-ranges.ts';
import {
  addressRefusal,
  type OutboundPolicy,
  type ResolveHost,
  userAddressProblem,
} from './guarded-fetch.ts';

const protectedPolicy = { isProtected: true, allowed: [] };
const INSIDE = 'must not point to a private, loopback, link-local or reserved address';
const LOCAL = 'must not point to this server (localhost)';

describe('a webhook address a user saves', () => {
  it.each([
    ['http://127.0.0.1:8080/internal-admin/delete-everything', INSIDE],
    ['http://2130706433/', INSIDE],
    ['http://0x7f.1/', INSIDE],
    ['http://0177.0.0.1/', INSIDE],
    ['http://127.1/', INSIDE],
    ['http://0x7f000001/', INSIDE],
    ['http://[::1]/', INSIDE],
    ['http://[::ffff:7f00:1]/', INSIDE],
    ['http://[::ffff:169.254.169.254]/latest/meta-data/', INSIDE],
    ['http://169.254.169.254/latest/meta-data/', INSIDE],
    ['http://0.0.0.0:9090/', INSIDE],
    ['http://10.0.0.3:8080/', INSIDE],
    ['http://[fd00::3]/', INSIDE],
    ['http://localhost/', LOCAL],
    ['http://LOCALHOST./', LOCAL],
    ['http://admin.localhost/', LOCAL],
    ['ftp://hooks.example.com/', 'must be an http:// or https:// address'],
    ['javascript:alert(1)', 'must be an http:// or https:// address'],
  ])('refuses %s', (url, problem) => {
    expect(userAddressProblem(url, protectedPolicy)).toBe(problem);
  });

  it('accepts a public name or address, and a private one root allows', () => {
    expect(userAddressProblem('https://hooks.example.com/turnpike', protectedPolicy)).toBeUndefined();
    expect(userAddressProblem('http://8.8.8.8/', protectedPolicy)).toBeUndefined();
    // A name is judged when it is called: DNS can change after the save.
    expect(userAddressProblem('http://internal.example.test/', protectedPolicy)).toBeUndefined();
    const range = parseRange('10.0.0.0/8');
    const allowing = { isProtected: true, allowed: range ? [range] : [] };
    expect(userAddressProblem('http://10.0.0.3:8080/', allowing)).toBeUndefined();
    expect(userAddressProblem('http://127.0.0.1/', allowing)).toBe(INSIDE);
    expect(userAddressProblem('http://127.0.0.1/', { isProtected: false, allowed: [] })).toBeUndefined();
  });
});

describe('a channel address an administrator below root saves', () => {
  /** A resolver that answers from a table; a name not in it does not resolve. */
  const resolve: ResolveHost = async (hostname) => {
    const answer = (
      {
        'models.internal.test': ['10.0.0.5'],
        'mixed.internal.test': ['8.8.8.8', 'fd00::5'],
        'public.upstream.test': ['8.8.8.8', '2001:4860:4860::8888'],
      } as Record<string, string[]>
    )[hostname];
    if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const reasonOf = async (
    url: string,
    policy: OutboundPolicy = protectedPolicy,
    protocols?: readonly string[],
  ) => (await addressRefusal(url, policy, { resolve, ...(protocols ? { protocols } : {}) }))?.reason;

  it('refuses what a webhook refuses, and a name with any address inside or none at all', async () => {
    expect(await reasonOf('http://169.254.169.254/latest/meta-data')).toBe('blocked_address');
    expect(await reasonOf('http://[::ffff:10.0.0.1]/')).toBe('blocked_address');
    expect(await reasonOf('http://localhost:11434')).toBe('local_name');
    expect(await reasonOf('http://models.internal.test/v1')).toBe('blocked_name');
    expect(await reasonOf('http://mixed.internal.test/v1')).toBe('blocked_name');
    expect(await reasonOf('http://nowhere.internal.test/v1')).toBe('unresolved');
    expect(await reasonOf('ftp://public.upstream.test/')).toBe('scheme');
  });

  it('accepts a name whose every address is public, a range root allows, a proxy scheme it is told of', async () => {
    expect(await reasonOf('https://public.upstream.test/v1')).toBeUndefined();
    const range = parseRange('10.0.0.0/8');
    const allowing = { isProtected: true, allowed: range ? [range] : [] };
    expect(await reasonOf('http://models.internal.test', allowing)).toBeUndefined();
    expect(
      await reasonOf('http://models.internal.test', { isProtected: false, allowed: [] }),
    ).toBeUndefined();
    expect(
      await reasonOf('socks5://public.upstream.test:1080', protectedPolicy, ['socks5:']),
    ).toBeUndefined();
    expect(await reasonOf('socks5://10.0.0.9:1080', protectedPolicy, ['socks5:'])).toBe('blocked_address');
  });
});
