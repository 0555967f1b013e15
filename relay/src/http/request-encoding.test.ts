import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody } from './request-encoding.ts';

async function read(stream: Readable): Promise<{ text: string; error?: Error & { statusCode?: number } }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { text: Buffer.concat(chunks).toString() };
  } catch (error) {
    return { text: Buffer.concat(chunks).toString(), error: error as Error };
  }
}

describe('compressed request bodies', () => {
  it('leaves a plain body alone and names an encoding it cannot read', () => {
    const body = Readable.from([Buffer.from('{}')]);
    expect(decodeBody(undefined, body).kind).toBe('plain');
    expect(decodeBody('identity', body).kind).toBe('plain');
    expect(decodeBody('zstd', body)).toEqual({ kind: 'unsupported', encoding: 'zstd' });
    // Names of Object's own members are no encodings either.
    expect(decodeBody('constructor', body)).toEqual({ kind: 'unsupported', encoding: 'constructor' });
  });

  it('reads gzip, deflate and br, in any case', async () => {
    const text = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'héllo' }] });
    for (const [encoding, bytes] of [
      ['gzip', gzipSync(text)],
      ['GZIP', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['br', brotliCompressSync(text)],
    ] as const) {
      const decoded = decodeBody(encoding, Readable.from([bytes]), 1024);
      if (decoded.kind !== 'decoded') throw new Error(`${encoding} not decoded`);
      expect(await read(decoded.body), encoding).toEqual({ text });
    }
  });

  it('fails with a 413 once the decompressed bytes pass the limit, and stops decompressing there', async () => {
    const decoded = decodeBody('gzip', Readable.from([gzipSync(' '.repeat(10_000_000))]), 100_000);
    if (decoded.kind !== 'decoded') throw new Error('not decoded');
    const { text, error } = await read(decoded.body);
    expect(error?.statusCode).toBe(413);
    expect(text.length).toBeLessThanOrEqual(100_000);
  });

  it('fails a body that is not what it claims to be', async () => {
    const decoded = decodeBody('gzip', Readable.from([Buffer.from('not gzip at all')]), 1024);
    if (decoded.kind !== 'decoded') throw new Error('not decoded');
    const { error } = await read(decoded.body);
    expect(error).toBeInstanceOf(Error);
    expect(error?.statusCode).toBeUndefined();
  });
});
