import { randomInt } from 'node:crypto';

export const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const HEX = '0123456789abcdef';

/** A string of `length` characters drawn uniformly from `alphabet` with the platform CSPRNG. */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}
