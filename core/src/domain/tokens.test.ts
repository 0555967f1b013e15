import { describe, expect, it } from 'vitest';
import {
  displayTokenKey,
  generateTokenKey,
  isIpAllowed,
  parseAllowIps,
  parseIpRule,
  stripTokenKey,
  whyCannotEnable,
} from './tokens.ts';

describe('token keys', () => {
  it('are 48 alphanumeric characters, different every time, shown with sk-', () => {
    const keys = new Set(Array.from({ length: 200 }, generateTokenKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^[0-9A-Za-z]{48}$/);
    const [first] = keys;
    expect(displayTokenKey(first!)).toBe(`sk-${first}`);
    expect(stripTokenKey(` sk-${first} `)).toBe(first);
    expect(stripTokenKey(first!)).toBe(first);
  });
});

describe('re-enabling a token', () => {
  const now = 1_700_000_000;
  it('is refused when expired or exhausted, allowed otherwise', () => {
    expect(whyCannotEnable({ expiredTime: now - 1, remainQuota: 10, unlimitedQuota: false }, now)).toMatch(
      /expired/,
    );
    expect(whyCannotEnable({ expiredTime: -1, remainQuota: 0, unlimitedQuota: false }, now)).toMatch(
      /used up/,
    );
    expect(whyCannotEnable({ expiredTime: -1, remainQuota: 0, unlimitedQuota: true }, now)).toBeUndefined();
    expect(
      whyCannotEnable({ expiredTime: now + 60, remainQuota: 1, unlimitedQuota: false }, now),
    ).toBeUndefined();
  });
});

describe('IP allow-lists', () => {
  it('accepts IPs and CIDR ranges of both families and names the bad entries', () => {
    const { rules, invalid } = parseAllowIps('10.0.0.0/8\n192.168.1.7, 2001:db8::/32\nnot-an-ip\n1.2.3.4/33');
    expect(rules).toHaveLength(3);
    expect(invalid).toEqual(['not-an-ip', '1.2.3.4/33']);
    expect(parseIpRule('::1')).toMatchObject({ family: 6, prefix: 128 });
    expect(parseIpRule('1.2.3.4/24/1')).toBeUndefined();
  });

  it('matches addresses inside the ranges only', () => {
    const { rules } = parseAllowIps('10.0.0.0/8\n192.168.1.7\n2001:db8::/32');
    expect(isIpAllowed(rules, '10.200.3.4')).toBe(true);
    expect(isIpAllowed(rules, '11.0.0.1')).toBe(false);
    expect(isIpAllowed(rules, '192.168.1.7')).toBe(true);
    expect(isIpAllowed(rules, '192.168.1.8')).toBe(false);
    expect(isIpAllowed(rules, '::ffff:10.1.1.1')).toBe(true);
    expect(isIpAllowed(rules, '2001:db8:1::5')).toBe(true);
    expect(isIpAllowed(rules, '2001:db9::5')).toBe(false);
    expect(isIpAllowed(rules, 'garbage')).toBe(false);
  });

  it('allows everyone when the list is empty', () => {
    expect(isIpAllowed(parseAllowIps('  \n ').rules, '8.8.8.8')).toBe(true);
  });

  it('handles /0 and IPv4-in-IPv6 notation', () => {
    expect(isIpAllowed(parseAllowIps('0.0.0.0/0').rules, '8.8.8.8')).toBe(true);
    expect(isIpAllowed(parseAllowIps('::ffff:1.2.3.0/120').rules, '::ffff:102:304')).toBe(true);
  });
});
