/**
 * OpenAI chat completion chunks (https://platform.openai.com/docs/api-reference/chat-streaming) read as the
 * canonical stream: already canonical, so each `data:` event is parsed and handed on; usage comes in the last
 * chunk (the adapter asks for it with `stream_options.include_usage`), `[DONE]` ends it, and an `{ "error": … }`
 * chunk is an error after the 200.
 */
import type { NormalisedUsage, RelayError } from '../../contract.ts';
import { hasUsage } from '../../metering/usage.ts';
import { DONE, type SseEvent } from '../../sse.ts';
import { isRecord } from '../canonical.ts';
import type { DecodedEvent, StreamDecoder } from '../format.ts';
import { openAiAnswerUsage } from './usage.ts';

const NONE: DecodedEvent = { chunks: [] };

/** An in-band error chunk as a RelayError (never local: it came from the upstream). */
export function streamErrorOf(error: unknown): RelayError {
  const inner = isRecord(error) ? error : {};
  return {
    status: 502,
    message:
      typeof inner.message === 'string' ? inner.message.slice(0, 1000) : 'the upstream reported an error',
    type: typeof inner.type === 'string' ? inner.type : 'upstream_error',
    code: typeof inner.code === 'string' || typeof inner.code === 'number' ? inner.code : null,
    param: null,
    isLocal: false,
  };
}

export function createOpenAiChatDecoder(): StreamDecoder {
  let usage: NormalisedUsage | undefined;
  return {
    push(event: SseEvent): DecodedEvent {
      if (event.data === DONE) return { chunks: [], finished: true };
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return NONE;
      }
      if (!isRecord(chunk)) return NONE;
      if (chunk.error !== undefined && chunk.choices === undefined)
        return { chunks: [], error: streamErrorOf(chunk.error) };
      const reported = openAiAnswerUsage(chunk);
      if (hasUsage(reported)) usage = reported;
      return { chunks: Array.isArray(chunk.choices) && chunk.choices.length > 0 ? [chunk] : [] };
    },
    usage: () => usage,
  };
}
