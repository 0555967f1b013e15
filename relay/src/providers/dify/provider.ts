/**
 * Dify apps (https://docs.dify.ai/en/guides/application-publishing/developing-with-apis, `POST /v1/chat-messages`):
 * a wire of Dify's own, reached through the canonical chat shape. The request is the conversation as one `query`
 * (each message after its role, as Dify apps keep no history of ours), `inputs: {}`, `user` (the client's `user`,
 * else `turnpike`), `response_mode` `blocking` or `streaming`, the app's API key as a bearer token. The blocking
 * answer's `answer` and `metadata.usage`; the stream's `data:` events named by their `event` field: `message` and
 * `agent_message` carry text, `agent_thought` the agent's thought (as reasoning), `message_end` the usage and the
 * end, `error` an error after the 200; `ping` and the workflow events say nothing a chat client reads.
 */

import type { NormalisedUsage } from '../../contract.ts';
import {
  asString,
  type ChatAnswer,
  chatChunk,
  chatCompletion,
  contentText,
  isRecord,
  type Json,
  nowSeconds,
} from '../../formats/canonical.ts';
import type { DecodedEvent, Format, StreamDecoder } from '../../formats/format.ts';
import { openAiFormat } from '../../formats/openai/format.ts';
import { normaliseOpenAiUsage, toOpenAiUsageCounts } from '../../metering/usage.ts';
import { eventRecord, type SseEvent } from '../../sse.ts';
import { baseUrlOf, callOf, type Provider } from '../provider.ts';

const ROLE_NAMES: Readonly<Record<string, string>> = {
  system: 'SYSTEM',
  developer: 'SYSTEM',
  assistant: 'ASSISTANT',
  tool: 'TOOL',
  user: 'USER',
};

/** A canonical chat request as a Dify chat message. */
export function chatToDify(chat: Readonly<Json>, isStream: boolean): Json {
  const messages = (Array.isArray(chat.messages) ? chat.messages : []).filter(isRecord);
  const only = messages.length === 1 && messages[0]?.role === 'user';
  const query = only
    ? contentText(messages[0]?.content)
    : messages
        .map((m) => `${ROLE_NAMES[asString(m.role) ?? 'user'] ?? 'USER'}: \n${contentText(m.content)}`)
        .join('\n');
  return {
    inputs: {},
    query,
    response_mode: isStream ? 'streaming' : 'blocking',
    conversation_id: '',
    user: asString(chat.user) ?? 'turnpike',
  };
}

const usageOfMetadata = (metadata: unknown): NormalisedUsage | undefined =>
  isRecord(metadata) ? normaliseOpenAiUsage(metadata.usage) : undefined;

/** A blocking answer as a `chat.completion`. */
export function difyToChat(answer: Readonly<Json>, model: string): ChatAnswer {
  const usage = usageOfMetadata(answer.metadata);
  return {
    answer: chatCompletion(
      asString(answer.message_id) ?? `chatcmpl-dify-${nowSeconds()}`,
      model,
      { role: 'assistant', content: asString(answer.answer) ?? '' },
      'stop',
      usage && toOpenAiUsageCounts(usage),
    ),
    usage,
  };
}

export function createDifyDecoder(model: string): StreamDecoder {
  let id = `chatcmpl-dify-${nowSeconds()}`;
  const created = nowSeconds();
  let usage: NormalisedUsage | undefined;
  let started = false;
  return {
    usage: () => usage,
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return { chunks: [] };
      id = asString(payload.message_id) ?? id;
      const chunk = (delta: Json, finish: string | null = null) =>
        chatChunk(id, model, created, delta, finish);
      const chunks: Json[] = [];
      if (!started) {
        started = true;
        chunks.push(chunk({ role: 'assistant', content: '' }));
      }
      switch (payload.event) {
        case 'message':
        case 'agent_message': {
          const text = asString(payload.answer) ?? '';
          if (text) chunks.push(chunk({ content: text }));
          return { chunks };
        }
        case 'agent_thought': {
          const thought = asString(payload.thought) ?? '';
          if (thought) chunks.push(chunk({ reasoning_content: thought }));
          return { chunks };
        }
        case 'message_end':
          usage = usageOfMetadata(payload.metadata) ?? usage;
          chunks.push(chunk({}, 'stop'));
          return { chunks, finished: true };
        case 'error':
          return {
            chunks,
            error: {
              status: typeof payload.status === 'number' ? payload.status : 502,
              message: asString(payload.message) ?? 'the Dify app failed',
              type: 'upstream_error',
              code: asString(payload.code) ?? null,
              param: null,
              isLocal: false,
            },
          };
        default:
          return { chunks };
      }
    },
  };
}

export const difyFormat: Format = {
  id: 'dify',
  supports: (endpoint) => endpoint === 'chat',
  writeRequest(channel, input) {
    const json = input.payload.kind === 'json' ? chatToDify(input.payload.body, input.isStream) : {};
    if (channel.paramOverride) Object.assign(json, channel.paramOverride);
    return {
      path: '/v1/chat-messages',
      model: input.upstreamModel,
      headers: {},
      body: { kind: 'json', json },
    };
  },
  // Dify's errors are `{ code, message, status }`, which the OpenAI reader knows.
  readError: (status, body) => openAiFormat.readError(status, body),
  retriesBadRequest: false,
  usageOf: (answer) => usageOfMetadata(answer.metadata),
  answerToChat: difyToChat,
  streamToChat: createDifyDecoder,
};

export const difyProvider: Provider = {
  id: 'dify',
  format: difyFormat,
  genAiName: 'dify',
  supports: (endpoint) => endpoint === 'chat',
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const written = difyFormat.writeRequest(channel, input);
    return callOf(
      written,
      `${baseUrlOf(channel)}${written.path}`,
      { authorization: `Bearer ${channel.key ?? ''}` },
      channel,
    );
  },
  readError: (status, body) => difyFormat.readError(status, body),
};
