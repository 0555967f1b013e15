/**
 * Streams exactly as the providers print them in their documents or record them in their SDKs' test data (never
 * from our fakes), fed through the relay's SSE parser and the format's stream decoder cut into pieces of various
 * sizes: what a chat client would see (the text, the reasoning, the tool call's arguments, the finish reason) and
 * the usage the relay bills, as the document states them. The recorded ones are kept byte for byte in
 * `__documented__/`, each named with its source below. How the converted streams reach clients of other formats
 * through a listening relay is documented-streams.int.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSseParser } from '../sse.ts';
import { createChunkCollector } from '../testing/chat-chunks.ts';
import { anthropicFormat } from './anthropic/format.ts';
import type { Format } from './format.ts';
import { geminiFormat } from './gemini/format.ts';
import { openAiFormat } from './openai/format.ts';

/** A stream recorded in `__documented__/`, as its source wrote it. */
const documented = (name: string): string =>
  readFileSync(path.join(import.meta.dirname, '__documented__', name), 'utf8');

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

  /**
   * A stream recorded from OpenAI's API by the openai-python SDK for its own tests (`test_parse_pydantic_tool`,
   * gpt-4o-2024-08-06 asked for the weather in Edinburgh with one function tool), kept as
   * https://github.com/openai/openai-python/blob/e43b422412a9e96c9cc5192c61fffbe2d7e04836/.inline-snapshot/external/c6aa7e397b7123c3501f25df3a05d4daf7e8ad6d61ffa406ab5361fe36a8d5b1.bin
   * (the function's arguments in 14 pieces, `finish_reason: "tool_calls"`, then the `include_usage` chunk with no
   * choices, then `[DONE]`). The SDK's snapshot of the final completion states the call's id, name and arguments.
   */
  it.each([1, 7, 100, 8192])(
    "OpenAI's recorded tool-call stream reads as one GetWeatherArgs call with its whole arguments and 76 in / 24 out (pieces of %i bytes)",
    (step) => {
      const seen = readAsClient(openAiFormat, documented('openai-chat-tool-call.sse'), step);
      expect(seen).toMatchObject({
        content: '',
        toolCalls: [
          {
            id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
            name: 'GetWeatherArgs',
            arguments: '{"city":"Edinburgh","country":"UK","units":"c"}',
          },
        ],
        finishReason: 'tool_calls',
        finished: true,
      });
      expect(seen.usage).toMatchObject({ promptTokens: 76, completionTokens: 24, reasoningTokens: 0 });
    },
  );

  /**
   * Gemini's `streamGenerateContent?alt=sse` answer as Google's Firebase AI SDKs record it for their tests,
   * https://github.com/FirebaseExtended/vertexai-sdk-test-data/blob/9e8980ab78183d9a2d3ba6509076ab4776f56d01/mock-responses/googleai/streaming-success-basic-reply-short.txt
   * (three `data:` events; the last has `finishReason: "STOP"` and the whole `usageMetadata`: 7 prompt, 10
   * candidates, 17 total).
   */
  it.each([1, 9, 4096])(
    "Gemini's recorded short reply reads as its text, stop, and 7 in / 10 out (pieces of %i bytes)",
    (step) => {
      const seen = readAsClient(geminiFormat, documented('gemini-basic-reply-short.sse'), step);
      expect(seen).toMatchObject({
        content: 'The capital of Wyoming is **Cheyenne**.\n',
        reasoning: '',
        toolCalls: [],
        finishReason: 'stop',
        finished: true,
      });
      expect(seen.usage).toMatchObject({ promptTokens: 7, completionTokens: 10 });
    },
  );

  /**
   * gemini-2.5-flash thinking, then calling a function, from the same test data:
   * https://github.com/FirebaseExtended/vertexai-sdk-test-data/blob/9e8980ab78183d9a2d3ba6509076ab4776f56d01/mock-responses/googleai/streaming-success-thinking-function-call-thought-summary-signature.txt
   * (two thought summaries, then a `functionCall` `now` with no arguments and `finishReason: "STOP"`; the last
   * `usageMetadata`: 38 prompt, 6 candidates, 168 thoughts, 212 total). Thoughts are billed as output, so the
   * output is 212 − 38 = 6 + 168.
   */
  it.each([1, 64, 8192])(
    "Gemini's recorded thinking and function call read as the thought summaries, a `now` call and 38 in / 174 out (pieces of %i bytes)",
    (step) => {
      const seen = readAsClient(geminiFormat, documented('gemini-thinking-function-call.sse'), step);
      expect(seen.reasoning).toBe(
        "**Calculating the Days**\n\nI've determined the user's request involves calculating the days until New Year's Eve. I need to get the current date and the date of New Year's Eve. My plan involves using `default_api.now()` to get the current date and time. Then, I can perform the calculation to find the time difference.\n\n\n" +
          "**Determining the Approach**\n\nI'm now zeroing in on the best method. Having established the core requirement -- the number of days until New Year's Eve -- I've identified `default_api.now()` as my primary tool for retrieving the current date. I'll need to define December 31st of the current year. I've also recognized the need to calculate the difference, which isn't a direct function. I'll calculate this myself after getting today's date.\n\n\n",
      );
      expect(seen).toMatchObject({
        content: '',
        toolCalls: [{ name: 'now', arguments: '{}' }],
        finishReason: 'tool_calls',
        finished: true,
      });
      expect(seen.usage).toMatchObject({ promptTokens: 38, completionTokens: 174, reasoningTokens: 168 });
    },
  );
});
