/**
 * AWS's binary event-stream message (`application/vnd.amazon.eventstream`) written from its description
 * (https://smithy.io/2.0/aws/amazon-eventstream.html, and
 * https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream): a prelude of
 * total length and headers length (big-endian 32-bit) and its CRC32, the headers (name length, name, type, value),
 * the payload, and the CRC32 of everything before it. The fake upstreams frame their streams with this, not with the
 * codec the relay decodes with; providers/bedrock/event-stream-vectors.test.ts holds it to AWS's published vectors.
 */
import { crc32 } from 'node:zlib';

/** One header: its value type (the wire's type byte in the comment) and value. */
export type EventStreamHeader =
  | { readonly name: string; readonly type: 'boolean'; readonly value: boolean } // 0 true, 1 false
  | { readonly name: string; readonly type: 'byte' | 'short' | 'integer'; readonly value: number } // 2, 3, 4
  | { readonly name: string; readonly type: 'long' | 'timestamp'; readonly value: bigint } // 5, 8 (ms)
  | { readonly name: string; readonly type: 'binary' | 'uuid'; readonly value: Uint8Array } // 6, 9
  | { readonly name: string; readonly type: 'string'; readonly value: string }; // 7

function headerBytes(header: EventStreamHeader): Buffer {
  const name = Buffer.from(header.name, 'utf8');
  let value: Buffer;
  switch (header.type) {
    case 'boolean':
      value = Buffer.from([header.value ? 0 : 1]);
      break;
    case 'byte':
      value = Buffer.alloc(2);
      value[0] = 2;
      value.writeInt8(header.value, 1);
      break;
    case 'short':
      value = Buffer.alloc(3);
      value[0] = 3;
      value.writeInt16BE(header.value, 1);
      break;
    case 'integer':
      value = Buffer.alloc(5);
      value[0] = 4;
      value.writeInt32BE(header.value, 1);
      break;
    case 'long':
    case 'timestamp':
      value = Buffer.alloc(9);
      value[0] = header.type === 'long' ? 5 : 8;
      value.writeBigInt64BE(header.value, 1);
      break;
    case 'uuid':
      value = Buffer.concat([Buffer.from([9]), header.value]);
      break;
    case 'binary':
    case 'string': {
      const bytes = header.type === 'string' ? Buffer.from(header.value, 'utf8') : Buffer.from(header.value);
      const head = Buffer.alloc(3);
      head[0] = header.type === 'string' ? 7 : 6;
      head.writeUInt16BE(bytes.length, 1);
      value = Buffer.concat([head, bytes]);
      break;
    }
  }
  return Buffer.concat([Buffer.from([name.length]), name, value]);
}

/** One event-stream message of `headers` and `payload`, both CRCs computed. */
export function encodeEventStreamMessage(headers: readonly EventStreamHeader[], payload: Uint8Array): Buffer {
  const head = Buffer.concat(headers.map(headerBytes));
  const total = 12 + head.length + payload.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(head.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, head, payload]);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, tail]);
}

/** An event message as AWS services send them: `:event-type`, `:content-type` and `:message-type` = `event`. */
export const encodeEvent = (eventType: string, payload: string): Buffer =>
  encodeEventStreamMessage(
    [
      { name: ':event-type', type: 'string', value: eventType },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    Buffer.from(payload, 'utf8'),
  );
