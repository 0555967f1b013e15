/**
 * Streams exactly as the providers' own documents print them (captured from the documents, not from our fakes), fed
 * byte for byte through the relay's SSE parser and the format's stream decoder: what a chat client would see (the
 * text, the tool call's arguments, the finish reason) and the usage the relay bills, as the document states them.
 */
import { describe, expect, it } from 'vitest';
import { createSseParser } from '../sse.ts';
import { createChunkCollector } from '../testing/chat-chunks.ts';
import { anthropicFormat } from './anthropic/format.ts';
import type { Format } from './format.ts';

/** What a chat client assembles from the decoded chunks, the stream cut into `step`-byte pieces. */
function readAsClient(format: Format, stream: string, step: number) {
  const parser = createSseParser();
  const decoder = format.streamToChat('model');
  const bytes = Buffer.from(stream, 'utf8');
  const collector = createChunkCollector();
  let finished = false;
  for (let at = 0; at < bytes.length; at += step) {
    for (const event of parser.push(bytes.subarray(at, at + step))) {
      const decoded = decoder.push(event);
      finished ||= decoded.finished === true;
      for (const chunk of decoded.chunks) collector.push(chunk);
    }
  }
  return { ...collector.seen(), finished, usage: decoder.usage() };
}

/**
 * Anthropic's "Streaming request with tool use" response, from https://docs.anthropic.com/en/docs/build-with-claude/streaming
 * (text, a `ping`, a `tool_use` block streamed as `input_json_delta` pieces, `message_delta` with the usage).
 */
const ANTHROPIC_TOOL_USE_STREAM = `event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-opus-4-1-20250805","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":","}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" let"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'s"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" check"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" weather"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" for"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" San"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" Francisco"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":","}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" CA"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":":"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"location\\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \\"San"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" Francisc"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"o,"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" CA\\""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":", "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\"unit\\": \\"fah"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"renheit\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

`;

describe('streams as the providers document them', () => {
  it.each([1, 13, 4096])(
    "Anthropic's tool-use stream reads as the text, one get_weather call with its arguments, and 472 in / 89 out (pieces of %i bytes)",
    (step) => {
      const seen = readAsClient(anthropicFormat, ANTHROPIC_TOOL_USE_STREAM, step);
      expect(seen).toMatchObject({
        content: "Okay, let's check the weather for San Francisco, CA:",
        toolCalls: [
          {
            id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
            name: 'get_weather',
            arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}',
          },
        ],
        finishReason: 'tool_calls',
        finished: true,
      });
      expect(seen.usage).toMatchObject({ promptTokens: 472, completionTokens: 89 });
    },
  );
});
