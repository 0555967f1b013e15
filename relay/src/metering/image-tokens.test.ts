import { describe, expect, it } from 'vitest';
import { dataUrlImageSize, imagePartTokens, tileTokens, UNKNOWN_IMAGE_TOKENS } from './image-tokens.ts';
import { countChatPromptTokens } from './tokens.ts';

function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

/** A JPEG with an APP0 segment before the frame header, as cameras and encoders write them. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.alloc(14)]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

function webp(width: number, height: number): Buffer {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.write('WEBP', 8, 'latin1');
  b.write('VP8X', 12, 'latin1');
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

const dataUrl = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`;

describe('image input tokens by the tile formula', () => {
  it('matches the worked examples of the vision guide', () => {
    // 1024 x 1024: no scaling, 4 tiles.
    expect(tileTokens('gpt-4o', 'high', { width: 1024, height: 1024 })).toBe(765);
    // 2048 x 4096: fit to 1024 x 2048, then 768 x 1536: 6 tiles.
    expect(tileTokens('gpt-4o', 'high', { width: 2048, height: 4096 })).toBe(1105);
    // A small image is one tile.
    expect(tileTokens('gpt-4o', 'auto', { width: 200, height: 100 })).toBe(255);
    expect(tileTokens('gpt-4o', 'low', { width: 4096, height: 4096 })).toBe(85);
  });

  it('prices gpt-4o-mini images with its own base and tile', () => {
    expect(tileTokens('gpt-4o-mini', undefined, { width: 1024, height: 1024 })).toBe(2833 + 4 * 5667);
    expect(tileTokens('gpt-4o-mini', 'low', undefined)).toBe(2833);
  });

  it('reads the size from PNG, JPEG, GIF and WebP data URLs', () => {
    expect(dataUrlImageSize(dataUrl('image/png', png(1024, 768)))).toEqual({ width: 1024, height: 768 });
    expect(dataUrlImageSize(dataUrl('image/jpeg', jpeg(640, 480)))).toEqual({ width: 640, height: 480 });
    expect(dataUrlImageSize(dataUrl('image/gif', gif(32, 16)))).toEqual({ width: 32, height: 16 });
    expect(dataUrlImageSize(dataUrl('image/webp', webp(3000, 1000)))).toEqual({ width: 3000, height: 1000 });
    expect(dataUrlImageSize('data:image/png;base64,AAAA')).toBeUndefined();
  });

  it('keeps the flat count for a remote URL (never downloaded) and for an unreadable header', () => {
    expect(imagePartTokens('gpt-4o', { image_url: { url: 'https://example.test/cat.png' } })).toBe(
      UNKNOWN_IMAGE_TOKENS,
    );
    expect(imagePartTokens('gpt-4o', { image_url: 'data:image/png;base64,AAAA' })).toBe(UNKNOWN_IMAGE_TOKENS);
    // Low detail needs no size.
    expect(
      imagePartTokens('gpt-4o', { image_url: { url: 'https://example.test/a.png', detail: 'low' } }),
    ).toBe(85);
  });

  it('counts a large inline image in a chat prompt by its tiles, not a flat 255', () => {
    const message = (url: string) => ({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url } },
      ],
    });
    const remote = countChatPromptTokens('gpt-4o', [message('https://example.test/x.png')]);
    const inline = countChatPromptTokens('gpt-4o', [message(dataUrl('image/png', png(2048, 4096)))]);
    expect(inline - remote).toBe(1105 - UNKNOWN_IMAGE_TOKENS);
  });
});
