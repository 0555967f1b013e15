/**
 * Compressed request bodies (`Content-Encoding: gzip`, `deflate` or `br`), which the reference accepts on every relay
 * route and some SDKs send for large prompts. The body is decompressed as it is read; the relay's body limit applies
 * to the decompressed bytes, so a small compressed body cannot expand past it.
 */
import { type Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export type DecodedBody =
  /** Not compressed: read the body as it is. */
  | { readonly kind: 'plain' }
  | { readonly kind: 'decoded'; readonly body: Readable }
  | { readonly kind: 'unsupported'; readonly encoding: string };

const DECODERS: ReadonlyMap<string, () => Transform> = new Map([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
  ['br', createBrotliDecompress],
]);

/**
 * With `limit`, the decompressed stream fails with a 413 once it passes that many bytes, and decompression stops
 * there: a small body built to expand without end costs no more than the limit. Without one, the reader counts.
 */
export function decodeBody(encoding: string | undefined, body: Readable, limit?: number): DecodedBody {
  const name = encoding?.trim().toLowerCase() ?? '';
  if (name === '' || name === 'identity') return { kind: 'plain' };
  const decoder = DECODERS.get(name)?.();
  if (decoder === undefined) return { kind: 'unsupported', encoding: encoding ?? '' };
  body.on('error', (error) => decoder.destroy(error));
  body.pipe(decoder);
  if (limit === undefined) return { kind: 'decoded', body: decoder };
  let seen = 0;
  const capped = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen <= limit) return callback(null, chunk);
      decoder.destroy();
      callback(Object.assign(new Error('Request body is too large'), { statusCode: 413 }));
    },
  });
  decoder.on('error', (error) => capped.destroy(error));
  return { kind: 'decoded', body: decoder.pipe(capped) };
}

export const unsupportedEncoding = (encoding: string) =>
  `the request body's content-encoding "${encoding}" is not supported (use gzip, deflate or br)`;
export const UNREADABLE_ENCODING = 'the request body could not be decompressed';
