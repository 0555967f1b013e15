/**
 * OpenAI chat completions clients (https://platform.openai.com/docs/api-reference/chat): the key in
 * `Authorization: Bearer`, errors as `{ error: { message, type, param, code } }`, streams as `data:` chunks ended
 * by `data: [DONE]`, usage in a last chunk only when the client asked for it (`stream_options.include_usage`).
 * The canonical shape is this format, so nothing converts.
 */

import type { Ingress, StreamEncoder } from '../../contract.ts';
import { toOpenAiErrorBody } from '../../errors.ts';
import { toOpenAiUsage } from '../../metering/usage.ts';
import { formatSseEvent, formatSseJson, SSE_DONE_FRAME } from '../../sse.ts';
import { isRecord, type Json } from '../canonical.ts';
import { bearerKey } from '../ingress.ts';

/** An error chunk in a chat stream. */
export const chatErrorChunk = (message: string, type: string, code: string | number | null): string =>
  formatSseJson({ error: { message, type, param: null, code } });

/** A chat answer without the signed thinking the canonical shape may carry (canonical.ts). */
function withoutThinkingBlocks(answer: Json): Json {
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  if (
    !choices.some(
      (choice) => isRecord(choice) && isRecord(choice.message) && 'thinking_blocks' in choice.message,
    )
  )
    return answer;
  return {
    ...answer,
    choices: choices.map((choice) => {
      if (!isRecord(choice) || !isRecord(choice.message)) return choice;
      const { thinking_blocks: _signed, ...message } = choice.message;
      return { ...choice, message };
    }),
  };
}

export function createChatEncoder(body: Readonly<Json>, model: string, requestId: string): StreamEncoder {
  const askedUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  let last: Json = {};
  return {
    quotaComment: true,
    chunk(input, raw) {
      last = input;
      if (raw !== undefined) return formatSseEvent(raw);
      let chunk = input;
      // Signed thinking is for the clients that keep it (canonical.ts); an OpenAI chat client is not one.
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (isRecord(choice) && isRecord(choice.delta) && 'thinking_blocks' in choice.delta) {
        const { thinking_blocks: _signed, ...delta } = choice.delta;
        if (Object.keys(delta).length === 0 && choice.finish_reason == null) return '';
        chunk = { ...chunk, choices: [{ ...choice, delta }] };
      }
      if (!askedUsage && 'usage' in chunk) {
        const { usage: _hidden, ...visible } = chunk;
        return formatSseJson(visible);
      }
      return formatSseJson(chunk);
    },
    end(usage, usageShown) {
      if (!askedUsage || usageShown) return '';
      return formatSseJson({
        id: last.id ?? `chatcmpl-${requestId}`,
        object: last.object ?? 'chat.completion.chunk',
        created: last.created ?? Math.floor(Date.now() / 1000),
        model: last.model ?? model,
        choices: [],
        usage: toOpenAiUsage(usage),
      });
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
  fromChat: (answer, usage) => ({ ...withoutThinkingBlocks(answer), usage: toOpenAiUsage(usage) }),
  streamEncoder: createChatEncoder,
};
