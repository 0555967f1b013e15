/**
 * OpenAI chat completions clients (https://platform.openai.com/docs/api-reference/chat): the key in
 * `Authorization: Bearer`, errors as `{ error: { message, type, param, code } }`, streams as `data:` chunks ended
 * by `data: [DONE]`, usage in a last chunk only when the client asked for it (`stream_options.include_usage`).
 * The canonical shape is this format, so nothing converts.
 */
import { isRecord, type Json } from '../adapters/canonical.ts';
import { toOpenAiErrorBody } from '../errors.ts';
import { toOpenAiUsage } from '../metering/usage.ts';
import { SSE_DONE_FRAME } from '../sse.ts';
import { bearerKey, type Ingress, type StreamEncoder } from './ingress.ts';

/** An error chunk in a chat stream. */
export const chatErrorChunk = (message: string, type: string, code: string | number | null): string =>
  `data: ${JSON.stringify({ error: { message, type, param: null, code } })}\n\n`;

export function createChatEncoder(body: Readonly<Json>, model: string, requestId: string): StreamEncoder {
  const askedUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  let last: Json = {};
  return {
    quotaComment: true,
    chunk(chunk, raw) {
      last = chunk;
      if (raw !== undefined) return `data: ${raw}\n\n`;
      if (!askedUsage && 'usage' in chunk) {
        const { usage: _hidden, ...visible } = chunk;
        return `data: ${JSON.stringify(visible)}\n\n`;
      }
      return `data: ${JSON.stringify(chunk)}\n\n`;
    },
    end(usage, usageShown) {
      if (!askedUsage || usageShown) return '';
      return `data: ${JSON.stringify({
        id: last.id ?? `chatcmpl-${requestId}`,
        object: last.object ?? 'chat.completion.chunk',
        created: last.created ?? Math.floor(Date.now() / 1000),
        model: last.model ?? model,
        choices: [],
        usage: toOpenAiUsage(usage),
      })}\n\n`;
    },
    error: (error) => chatErrorChunk(error.message, error.type, error.code),
    done: SSE_DONE_FRAME,
  };
}

export const openAiChatIngress: Ingress = {
  format: 'openai',
  keyOf: (request) => bearerKey(request.headers.authorization),
  errorBody: (error, requestId) => toOpenAiErrorBody(error, requestId),
  toChat: (body, model, isStream) => ({ ...body, model, stream: isStream }),
  fromChat: (answer, usage) => ({ ...answer, usage: toOpenAiUsage(usage) }),
  streamEncoder: createChatEncoder,
};
