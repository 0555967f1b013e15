/**
 * The OpenAI channel settings that rewrite chat answers (https://platform.openai.com/docs/api-reference/chat/object
 * and /chat-streaming), for upstreams whose "OpenAI-compatible" answers are not quite that:
 *
 * - `thinking_to_content`: the reasoning an upstream sends apart (`reasoning_content`, or `reasoning`) is put
 *   into `content` inside `<think>\n … \n</think>\n`, for clients that show only `content`. In a stream the tag
 *   opens with the first reasoning delta and closes before the first content delta (or at the finish reason).
 * - `force_format`: each answer and chunk is rebuilt in the documented shape: `object` set, every choice with its
 *   `index`, `finish_reason` (null while streaming), a `message` with `role` and `content`; fields the
 *   documented shape does not have are dropped.
 *
 * Anything that does not parse as a chat answer (an error object, a foreign event) passes unchanged.
 */

import type { Json } from '@turnpike/core/json';
import type { ChannelView } from '../../contract.ts';
import type { AnswerRewrite } from '../../upstream/client.ts';
import { isRecord } from '../canonical.ts';

const OPEN = '<think>\n';
const CLOSE = '\n</think>\n';

/** The rewrite a channel's settings ask for on the chat endpoint, or undefined when none. */
export function chatAnswerRewriteOf(channel: ChannelView): AnswerRewrite | undefined {
  const thinking = channel.thinkingToContent === true;
  const force = channel.forceFormat === true;
  if (!thinking && !force) return undefined;
  return {
    json(text) {
      const answer = parseAnswer(text);
      if (answer === undefined) return text;
      if (thinking) thinkingIntoMessage(answer);
      return JSON.stringify(force ? formatAnswer(answer) : answer);
    },
    createStream() {
      const states = new Map<number, 'thinking' | 'closed'>();
      return (data) => {
        const chunk = parseAnswer(data);
        if (chunk === undefined) return data;
        if (thinking) thinkingIntoDelta(chunk, states);
        return JSON.stringify(force ? formatChunk(chunk) : chunk);
      };
    },
  };
}

function parseAnswer(text: string): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) && Array.isArray(parsed.choices) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the reasoning text out of a message or delta (both field names upstreams use). */
function takeReasoning(target: Json): string {
  const text =
    typeof target.reasoning_content === 'string' && target.reasoning_content !== ''
      ? target.reasoning_content
      : typeof target.reasoning === 'string'
        ? target.reasoning
        : '';
  delete target.reasoning_content;
  delete target.reasoning;
  return text;
}

function thinkingIntoMessage(answer: Json): void {
  for (const choice of answer.choices as unknown[]) {
    const message = isRecord(choice) ? choice.message : undefined;
    if (!isRecord(message)) continue;
    const reasoning = takeReasoning(message);
    if (reasoning === '') continue;
    const content = typeof message.content === 'string' ? message.content : '';
    message.content = `${OPEN}${reasoning}${CLOSE}${content}`;
  }
}

function thinkingIntoDelta(chunk: Json, states: Map<number, 'thinking' | 'closed'>): void {
  (chunk.choices as unknown[]).forEach((choice, position) => {
    if (!isRecord(choice)) return;
    const index = typeof choice.index === 'number' ? choice.index : position;
    const delta = isRecord(choice.delta) ? choice.delta : undefined;
    let state = states.get(index);
    let text = '';
    if (delta) {
      const reasoning = takeReasoning(delta);
      const content = typeof delta.content === 'string' ? delta.content : '';
      if (reasoning !== '' && state === undefined) {
        text += OPEN;
        state = 'thinking';
      }
      // Reasoning after the answer began (rare) is kept as text rather than dropped.
      text += reasoning;
      if (content !== '' && state === 'thinking') {
        text += CLOSE;
        state = 'closed';
      }
      text += content;
    }
    if (state === 'thinking' && typeof choice.finish_reason === 'string') {
      text += CLOSE;
      state = 'closed';
    }
    if (state !== undefined) states.set(index, state);
    if (text === '' && !(delta && typeof delta.content === 'string')) return;
    if (delta) delta.content = text;
    else choice.delta = { content: text };
  });
}

const pick = (from: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
};

const MESSAGE_FIELDS = [
  'role',
  'content',
  'reasoning_content',
  'refusal',
  'tool_calls',
  'function_call',
  'annotations',
  'audio',
] as const;

function header(answer: Json, object: string): Json {
  return {
    id: typeof answer.id === 'string' ? answer.id : '',
    object,
    created: typeof answer.created === 'number' ? answer.created : Math.floor(Date.now() / 1000),
    model: typeof answer.model === 'string' ? answer.model : '',
    ...pick(answer, ['system_fingerprint', 'service_tier']),
  };
}

function formatAnswer(answer: Json): Json {
  const choices = (answer.choices as unknown[]).filter(isRecord).map((choice, position) => {
    const message = isRecord(choice.message) ? choice.message : {};
    return {
      index: typeof choice.index === 'number' ? choice.index : position,
      message: {
        ...pick(message, MESSAGE_FIELDS),
        role: typeof message.role === 'string' ? message.role : 'assistant',
        content: typeof message.content === 'string' ? message.content : null,
      },
      logprobs: choice.logprobs ?? null,
      finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    };
  });
  return { ...header(answer, 'chat.completion'), choices, ...pick(answer, ['usage']) };
}

function formatChunk(chunk: Json): Json {
  const choices = (chunk.choices as unknown[]).filter(isRecord).map((choice, position) => ({
    index: typeof choice.index === 'number' ? choice.index : position,
    delta: isRecord(choice.delta) ? pick(choice.delta, MESSAGE_FIELDS) : {},
    ...(choice.logprobs !== undefined ? { logprobs: choice.logprobs } : {}),
    finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
  }));
  return {
    ...header(chunk, 'chat.completion.chunk'),
    choices,
    ...(isRecord(chunk.usage) ? { usage: chunk.usage } : {}),
  };
}
