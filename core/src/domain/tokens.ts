import { isIP } from 'node:net';
import { ALPHANUMERIC, randomString } from '../crypto/random.ts';

export { TokenStatus } from './closed-sets.ts';

export const TOKEN_KEY_LENGTH = 48;
export const TOKEN_KEY_PREFIX = 'sk-';
/** -1 in `expired_time` means the token never expires. */
export const NEVER_EXPIRES = -1;

/** A new token key: 48 alphanumeric characters from the platform CSPRNG, stored without `sk-`. */
export function generateTokenKey(): string {
  return randomString(TOKEN_KEY_LENGTH, ALPHANUMERIC);
}

/** The key as people copy it: with `sk-`. */
export const displayTokenKey = (key: string): string => `${TOKEN_KEY_PREFIX}${key}`;

/** A key as typed or pasted, without `sk-` and surrounding blanks. */
export const stripTokenKey = (key: string): string => {
  const trimmed = key.trim();
  return trimmed.startsWith(TOKEN_KEY_PREFIX) ? trimmed.slice(TOKEN_KEY_PREFIX.length) : trimmed;
};

export interface TokenLimits {
  readonly expiredTime: number;
  readonly remainQuota: number;
  readonly unlimitedQuota: boolean;
}

/** Whether a token's expiry has passed at `now` (Unix seconds). */
export const isTokenExpired = (token: TokenLimits, now: number): boolean =>
  token.expiredTime !== NEVER_EXPIRES && token.expiredTime <= now;

/** Whether a limited token has no quota left. */
export const isTokenExhausted = (token: TokenLimits): boolean =>
  !token.unlimitedQuota && token.remainQuota <= 0;

/** Why a token may not be (re-)enabled with these limits at `now`, or undefined when it may. */
export function whyCannotEnable(token: TokenLimits, now: number): string | undefined {
  if (isTokenExpired(token, now))
    return 'this token has expired and cannot be enabled; change its expiry time or set it to never expire first';
  if (isTokenExhausted(token))
    return 'this token has used up its quota and cannot be enabled; raise its remaining quota or make it unlimited first';
  return undefined;
}

/** One allowed address or range, parsed once. */
export interface IpRule {
  readonly family: 4 | 6;
  /** The network address as a big integer (IPv4 in 32 bits, IPv6 in 128). */
  readonly network: bigint;
  readonly prefix: number;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6ToBigInt(ip: string): bigint {
  let text = ip;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const n = ipv4ToBigInt(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(Number.parseInt(part, 16)), 0n);
}

function toBigInt(ip: string, family: 4 | 6): bigint {
  return family === 4 ? ipv4ToBigInt(ip) : ipv6ToBigInt(ip);
}

function maskOf(family: 4 | 6, prefix: number): bigint {
  const bits = family === 4 ? 32n : 128n;
  const all = (1n << bits) - 1n;
  return prefix === 0 ? 0n : (all << (bits - BigInt(prefix))) & all;
}

/** Parses one IP or CIDR range; undefined when it is neither. */
export function parseIpRule(text: string): IpRule | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const family = isIP(address);
  if (family !== 4 && family !== 6) return undefined;
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return undefined;
    prefix = Number(prefixText);
    if (prefix > max) return undefined;
  }
  return { family, prefix, network: toBigInt(address, family) & maskOf(family, prefix) };
}

/** The entries of an allow-list text: one per line (commas and blanks also separate), blanks dropped. */
export function splitAllowIps(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Parses an allow-list; `invalid` names the entries that are neither an IP nor a CIDR range. */
export function parseAllowIps(text: string): { rules: IpRule[]; invalid: string[] } {
  const rules: IpRule[] = [];
  const invalid: string[] = [];
  for (const entry of splitAllowIps(text)) {
    const rule = parseIpRule(entry);
    if (rule) rules.push(rule);
    else invalid.push(entry);
  }
  return { rules, invalid };
}

/** Whether `ip` is allowed by `rules`; an empty list allows every address. IPv4-mapped IPv6 counts as IPv4. */
export function isIpAllowed(rules: readonly IpRule[], ip: string): boolean {
  if (rules.length === 0) return true;
  let address = ip.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) address = mapped[1];
  const family = isIP(address);
  if (family !== 4 && family !== 6) return false;
  const value = toBigInt(address, family);
  return rules.some(
    (rule) => rule.family === family && (value & maskOf(family, rule.prefix)) === rule.network,
  );
}
