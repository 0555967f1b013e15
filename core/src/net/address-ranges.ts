/**
 * IP addresses and CIDR ranges, and the ranges a server-side request to an address a user chose must not reach
 * (docs/adr/0039). The special-purpose ranges are IANA's registries (RFC 6890 and its updates):
 * https://www.iana.org/assignments/iana-ipv4-special-registry and
 * https://www.iana.org/assignments/iana-ipv6-special-registry, plus multicast and the reserved 240/4.
 */
import { isIP } from 'node:net';

/** A CIDR range: its network address (4 or 16 bytes, bits past the prefix cleared) and prefix length. */
export interface AddressRange {
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

function ipv6Bytes(text: string): Uint8Array {
  // An IPv4 tail (`::ffff:127.0.0.1`) is the last two groups written as a dotted quad.
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((w) => w.toString(16)).join(':'),
  );
  const [head = '', rest] = hex.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((w) => Number.parseInt(w, 16)));
  const before = words(head);
  const after = words(rest ?? '');
  const all = [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = new Uint8Array(16);
  all.forEach((word, i) => {
    bytes[i * 2] = word >> 8;
    bytes[i * 2 + 1] = word & 0xff;
  });
  return bytes;
}

/**
 * The bytes of an address in standard notation (dotted quad, or IPv6 with an optional zone), or undefined. Other
 * spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`) are not addresses here: a URL's host is normalised by the URL
 * parser first, and the resolver answers in standard notation.
 */
export function parseAddress(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return ipv4Bytes(address);
  if (family === 6) return ipv6Bytes(address);
  return undefined;
}

function maskTo(bytes: Uint8Array, prefix: number): Uint8Array {
  return bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return byte & ((0xff00 >> keep) & 0xff);
  });
}

/** A range written `address/prefix`, or a single address (all its bits); undefined when it is neither. */
export function parseRange(text: string): AddressRange | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined || address.includes('%')) return undefined;
  const bytes = parseAddress(address);
  if (!bytes) return undefined;
  const bits = bytes.length * 8;
  if (prefixText === undefined) return { bytes, prefix: bits };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= bits ? { bytes: maskTo(bytes, prefix), prefix } : undefined;
}

/** A range in standard notation, `10.0.0.0/8` or `fd00::/8`, host bits cleared. */
export function formatRange(range: AddressRange): string {
  if (range.bytes.length === 4) return `${range.bytes.join('.')}/${range.prefix}`;
  const words = Array.from({ length: 8 }, (_, i) =>
    (((range.bytes[i * 2] ?? 0) << 8) | (range.bytes[i * 2 + 1] ?? 0)).toString(16),
  );
  // The longest run of two or more zero groups becomes "::" (RFC 5952 section 4.2).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && words[j] === '0') j += 1;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const text =
    best.at < 0
      ? words.join(':')
      : `${words.slice(0, best.at).join(':')}::${words.slice(best.at + best.length).join(':')}`;
  return `${text}/${range.prefix}`;
}

export function isInRange(bytes: Uint8Array, range: AddressRange): boolean {
  if (bytes.length !== range.bytes.length) return false;
  const masked = maskTo(bytes, range.prefix);
  return masked.every((byte, i) => byte === range.bytes[i]);
}

const range = (text: string): AddressRange => {
  const parsed = parseRange(text);
  if (!parsed) throw new Error(`not a range: ${text}`);
  return parsed;
};

interface NamedRange {
  readonly range: AddressRange;
  readonly name: string;
}

const named = (text: string, name: string): NamedRange => ({ range: range(text), name: `${text} (${name})` });

/** Ranges no user-chosen request may reach unless root allows them. */
const BLOCKED: readonly NamedRange[] = [
  named('0.0.0.0/8', '"this network", RFC 791'),
  named('10.0.0.0/8', 'private, RFC 1918'),
  named('100.64.0.0/10', 'shared address space (CGNAT), RFC 6598'),
  named('127.0.0.0/8', 'loopback, RFC 1122'),
  named('169.254.0.0/16', 'link-local and cloud metadata, RFC 3927'),
  named('172.16.0.0/12', 'private, RFC 1918'),
  named('192.0.0.0/24', 'IETF protocol assignments, RFC 6890'),
  named('192.0.2.0/24', 'documentation, RFC 5737'),
  named('192.88.99.0/24', '6to4 relay anycast, RFC 7526'),
  named('192.168.0.0/16', 'private, RFC 1918'),
  named('198.18.0.0/15', 'benchmarking, RFC 2544'),
  named('198.51.100.0/24', 'documentation, RFC 5737'),
  named('203.0.113.0/24', 'documentation, RFC 5737'),
  named('224.0.0.0/4', 'multicast, RFC 5771'),
  named('240.0.0.0/4', 'reserved and broadcast, RFC 1112 and RFC 919'),
  named('::/128', 'unspecified, RFC 4291'),
  named('::1/128', 'loopback, RFC 4291'),
  named('::/96', 'IPv4-compatible, deprecated by RFC 4291'),
  named('64:ff9b:1::/48', 'local-use IPv4/IPv6 translation, RFC 8215'),
  named('100::/64', 'discard-only, RFC 6666'),
  named('2001::/23', 'IETF protocol assignments, RFC 2928'),
  named('2001:db8::/32', 'documentation, RFC 3849'),
  named('2002::/16', '6to4, RFC 3056'),
  named('3fff::/20', 'documentation, RFC 9637'),
  named('5f00::/16', 'segment routing SIDs, RFC 9602'),
  named('fc00::/7', 'unique local, RFC 4193'),
  named('fe80::/10', 'link-local, RFC 4291'),
  named('fec0::/10', 'site-local, deprecated by RFC 3879'),
  named('ff00::/8', 'multicast, RFC 4291'),
];

/** IPv6 ranges that carry an IPv4 address in their last 32 bits, which is where the packet really goes. */
const EMBEDDING_IPV4: readonly AddressRange[] = [
  range('::ffff:0:0/96'), // IPv4-mapped, RFC 4291
  range('64:ff9b::/96'), // IPv4/IPv6 translation, RFC 6052
];

/** The IPv4 address an IPv6 address stands for, or the address itself. */
function effectiveBytes(bytes: Uint8Array): Uint8Array {
  return bytes.length === 16 && EMBEDDING_IPV4.some((r) => isInRange(bytes, r)) ? bytes.slice(12) : bytes;
}

/**
 * Why an address may not be reached, naming its range (for the server log only), or undefined when it may: it
 * is in no blocked range, or in a range of `allowed`. An IPv4-mapped or translated IPv6 address is judged as the
 * IPv4 address it carries; an address that cannot be read is refused.
 */
export function refusedRangeOf(address: string, allowed: readonly AddressRange[] = []): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return 'not an IP address';
  const bytes = effectiveBytes(parsed);
  if (allowed.some((r) => isInRange(bytes, r) || isInRange(parsed, r))) return undefined;
  return BLOCKED.find((r) => isInRange(bytes, r.range))?.name;
}
