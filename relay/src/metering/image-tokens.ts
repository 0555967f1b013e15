/**
 * Input tokens of an image part by OpenAI's vision formula
 * (https://platform.openai.com/docs/guides/images-vision#calculating-costs): `detail: "low"` costs the base;
 * otherwise the image is scaled to fit 2048×2048, then its shortest side to 768, and each 512 px tile costs
 * the tile price on top of the base (170 + 85; gpt-4o-mini 5667 + 2833, as the reference prices it).
 *
 * Dimensions are read only from what the request already holds: the header of a `data:` URL (PNG, JPEG, GIF,
 * WebP). A remote URL is never downloaded on the request path; it keeps the flat count (the reference's
 * fallback, 3 × 85).
 */

/** What an image part costs when its size is unknown (a remote URL, an unreadable header). */
export const UNKNOWN_IMAGE_TOKENS = 255;

/** Base64 characters decoded to find a size: enough for a JPEG's frame header after large metadata blocks. */
const HEADER_CHARS = 256 * 1024;

export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

const isMini = (model: string) => model.toLowerCase().startsWith('gpt-4o-mini');

/** Tokens of an image of a known size (or `low` detail, which needs none). */
export function tileTokens(model: string, detail: string | undefined, size: ImageSize | undefined): number {
  const base = isMini(model) ? 2833 : 85;
  const tile = isMini(model) ? 5667 : 170;
  if (detail === 'low') return base;
  if (size === undefined || size.width <= 0 || size.height <= 0) return UNKNOWN_IMAGE_TOKENS;
  let { width, height } = size;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  width *= fit;
  height *= fit;
  const shortest = Math.min(width, height);
  if (shortest > 768) {
    width = (width * 768) / shortest;
    height = (height * 768) / shortest;
  }
  return base + tile * Math.ceil(Math.floor(width) / 512) * Math.ceil(Math.floor(height) / 512);
}

/** The pixel size in the header of a base64 `data:` URL, or undefined (not one, or a format not read). */
export function dataUrlImageSize(url: string): ImageSize | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  const chars = url.slice(comma + 1, comma + 1 + HEADER_CHARS);
  const bytes = Buffer.from(chars.slice(0, chars.length - (chars.length % 4)), 'base64');
  return pngSize(bytes) ?? gifSize(bytes) ?? webpSize(bytes) ?? jpegSize(bytes);
}

function pngSize(b: Buffer): ImageSize | undefined {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR')
    return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function gifSize(b: Buffer): ImageSize | undefined {
  if (b.length < 10 || b.toString('latin1', 0, 4) !== 'GIF8') return undefined;
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function webpSize(b: Buffer): ImageSize | undefined {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP')
    return undefined;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  return undefined;
}

/** Walks JPEG segments to the first start-of-frame marker (SOF0–SOF15 except DHT, JPG and DAC). */
function jpegSize(b: Buffer): ImageSize | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] as number;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { width: b.readUInt16BE(at + 7), height: b.readUInt16BE(at + 5) };
    at += 2 + length;
  }
  return undefined;
}

/** Tokens of a chat `image_url` part: `{ image_url: { url, detail } }` or `{ image_url: "<url>" }`. */
export function imagePartTokens(model: string, part: { readonly image_url?: unknown }): number {
  const image = part.image_url;
  const url =
    typeof image === 'string'
      ? image
      : typeof image === 'object' && image !== null && typeof (image as { url?: unknown }).url === 'string'
        ? (image as { url: string }).url
        : '';
  const detail =
    typeof image === 'object' && image !== null ? (image as { detail?: unknown }).detail : undefined;
  return tileTokens(model, typeof detail === 'string' ? detail : undefined, dataUrlImageSize(url));
}
