/**
 * AWS's published event-stream vectors (the encoded messages and their decoded descriptions shared by AWS's SDKs,
 * here as https://github.com/aws/aws-sdk-go/tree/main/private/protocol/eventstream/testdata `encoded/` and
 * `decoded/`), written out as hex and literals: the relay's reader decodes each to the documented headers and
 * payload and refuses each corrupted one; the fake upstreams' own encoder (testing/event-stream.ts) gives the same
 * bytes, so the Bedrock streams the integration tests replay are framed as AWS frames them.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type EventStreamHeader, encodeEvent, encodeEventStreamMessage } from '../../testing/event-stream.ts';
import type { UpstreamBody } from '../../upstream/client.ts';
import { createEventStreamReader, type EventStreamMessage, eventStreamToSse } from './event-stream.ts';

const PAYLOAD = "{'foo':'bar'}"; // eydmb28nOidiYXInfQ== in every positive vector

interface Vector {
  readonly name: string;
  readonly hex: string;
  readonly totalLength: number;
  readonly headersLength: number;
  readonly preludeCrc: number;
  readonly messageCrc: number;
  /** The decoded headers, in the description's JSON form (bytes in base64, numbers as numbers). */
  readonly headers: Readonly<Record<string, unknown>>;
  /** The same headers for the fake's encoder. */
  readonly encode: readonly EventStreamHeader[];
  readonly payload: string;
}

const VECTORS: readonly Vector[] = [
  {
    name: 'payload_one_str_header',
    hex: '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
    totalLength: 61,
    headersLength: 32,
    preludeCrc: 134054806,
    messageCrc: -1919153999 >>> 0,
    headers: { 'content-type': 'application/json' },
    encode: [{ name: 'content-type', type: 'string', value: 'application/json' }],
    payload: PAYLOAD,
  },
  {
    name: 'int32_header',
    hex: '0000002d0000001041c424b80a6576656e742d74797065040000a00c7b27666f6f273a27626172277d36f480a0',
    totalLength: 45,
    headersLength: 16,
    preludeCrc: 1103373496,
    messageCrc: 921993376,
    headers: { 'event-type': 40972 },
    encode: [{ name: 'event-type', type: 'integer', value: 40972 }],
    payload: PAYLOAD,
  },
  {
    name: 'payload_no_headers',
    hex: '0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936',
    totalLength: 29,
    headersLength: 0,
    preludeCrc: 0xfd528c5a,
    messageCrc: 0xc3653936,
    headers: {},
    encode: [],
    payload: PAYLOAD,
  },
  {
    name: 'empty_message',
    hex: '000000100000000005c248eb7d98c8ff',
    totalLength: 16,
    headersLength: 0,
    preludeCrc: 0x05c248eb,
    messageCrc: 0x7d98c8ff,
    headers: {},
    encode: [],
    payload: '',
  },
  {
    name: 'all_headers',
    hex: '000000cc000000af0fae64ca0a6576656e742d74797065040000a00c0c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0a626f6f6c2066616c73650109626f6f6c207472756500046279746502cf08627974652062756606001449276d2061206c6974746c6520746561706f74210974696d657374616d70080000000000845fed05696e74313603002a05696e7436340500000000028757b20475756964090102030405060708090a0b0c0d0e0f107b27666f6f273a27626172277daba5f10c',
    totalLength: 204,
    headersLength: 175,
    preludeCrc: 263087306,
    messageCrc: -1415188212 >>> 0,
    headers: {
      'event-type': 40972,
      'content-type': 'application/json',
      'bool false': false,
      'bool true': true,
      byte: -49,
      'byte buf': 'SSdtIGEgbGl0dGxlIHRlYXBvdCE=',
      timestamp: 8675309,
      int16: 42,
      int64: 42424242,
      uuid: 'AQIDBAUGBwgJCgsMDQ4PEA==',
    },
    encode: [
      { name: 'event-type', type: 'integer', value: 40972 },
      { name: 'content-type', type: 'string', value: 'application/json' },
      { name: 'bool false', type: 'boolean', value: false },
      { name: 'bool true', type: 'boolean', value: true },
      { name: 'byte', type: 'byte', value: -49 },
      { name: 'byte buf', type: 'binary', value: Buffer.from("I'm a little teapot!") },
      { name: 'timestamp', type: 'timestamp', value: 8675309n },
      { name: 'int16', type: 'short', value: 42 },
      { name: 'int64', type: 'long', value: 42424242n },
      { name: 'uuid', type: 'uuid', value: Uint8Array.from({ length: 16 }, (_, i) => i + 1) },
    ],
    payload: PAYLOAD,
  },
];

/** The corrupted messages and the check each fails. */
const CORRUPTED = [
  {
    name: 'corrupted_payload',
    hex: '0000001d00000000fd528c5a5b27666f6f273a27626172277dc3653936',
    error: /checksum/i,
  },
  {
    name: 'corrupted_headers',
    hex: '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b61666f6f273a27626172277d8d9c08b1',
    error: /checksum/i,
  },
  {
    name: 'corrupted_header_len',
    hex: '0000003d0000002107fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
    error: /checksum/i,
  },
  {
    // Its length says 62 bytes for 61: a 62nd byte completes it, and its prelude checksum fails.
    name: 'corrupted_length',
    hex: '0000003e0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b100',
    error: /checksum/i,
  },
];

/** A decoded header value in the description's JSON form. */
function plain(header: { type: string; value: unknown }): unknown {
  const { type, value } = header;
  if (type === 'binary') return Buffer.from(value as Uint8Array).toString('base64');
  if (type === 'uuid') return Buffer.from(String(value).replace(/-/g, ''), 'hex').toString('base64');
  if (type === 'timestamp') return (value as Date).getTime();
  if (type === 'long') return Number(value);
  return value;
}

const plainHeaders = (message: EventStreamMessage) =>
  Object.fromEntries(Object.entries(message.headers).map(([name, header]) => [name, plain(header)]));

/** The bytes of `hex` pushed `step` bytes at a time. */
function readAll(hex: string, step: number): EventStreamMessage[] {
  const bytes = Buffer.from(hex, 'hex');
  const reader = createEventStreamReader();
  const messages: EventStreamMessage[] = [];
  for (let at = 0; at < bytes.length; at += step)
    messages.push(...reader.push(bytes.subarray(at, at + step)));
  expect(reader.pending()).toBe(0);
  return messages;
}

describe("AWS's event-stream vectors", () => {
  it.each(VECTORS)('the reader decodes $name to its documented headers and payload, cut anywhere', (v) => {
    for (const step of [1, 7, v.hex.length]) {
      const messages = readAll(v.hex, step);
      expect(messages).toHaveLength(1);
      expect(plainHeaders(messages[0]!)).toEqual(v.headers);
      expect(Buffer.from(messages[0]!.body).toString('utf8')).toBe(v.payload);
    }
  });

  it.each(VECTORS)('$name: its prelude and CRCs are CRC32 (gzip) of the documented spans', (v) => {
    const bytes = Buffer.from(v.hex, 'hex');
    expect(bytes.readUInt32BE(0)).toBe(v.totalLength);
    expect(bytes.length).toBe(v.totalLength);
    expect(bytes.readUInt32BE(4)).toBe(v.headersLength);
    expect(bytes.readUInt32BE(8)).toBe(v.preludeCrc);
    expect(crc32(bytes.subarray(0, 8))).toBe(v.preludeCrc);
    expect(bytes.readUInt32BE(v.totalLength - 4)).toBe(v.messageCrc);
    expect(crc32(bytes.subarray(0, v.totalLength - 4))).toBe(v.messageCrc);
  });

  it.each(VECTORS)("the fake upstreams' encoder writes $name byte for byte", (v) => {
    expect(encodeEventStreamMessage(v.encode, Buffer.from(v.payload)).toString('hex')).toBe(v.hex);
  });

  it.each(CORRUPTED)('refuses $name', (c) => {
    expect(() => readAll(c.hex, c.hex.length)).toThrow(c.error);
  });

  it('a Bedrock stream refuses a message whose CRC was changed in transit', async () => {
    const frame = encodeEvent(
      'chunk',
      JSON.stringify({ bytes: Buffer.from('{"type":"message_stop"}').toString('base64') }),
    );
    const good: UpstreamBody = {
      async *[Symbol.asyncIterator]() {
        yield frame;
      },
      ended: true,
    };
    let text = '';
    for await (const piece of eventStreamToSse(good)) text += Buffer.from(piece).toString('utf8');
    expect(text).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    const bad = Buffer.from(frame);
    bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 0x01;
    const corrupted: UpstreamBody = {
      async *[Symbol.asyncIterator]() {
        yield bad;
      },
      ended: true,
    };
    await expect(
      (async () => {
        for await (const _ of eventStreamToSse(corrupted)) {
          // nothing may come out
        }
      })(),
    ).rejects.toThrow(/checksum/i);
  });
});
