/**
 * Anthropic Messages streams (https://docs.anthropic.com/en/docs/build-with-claude/streaming) read as canonical
 * chat chunks: `message_start` (id, model, input usage) opens the answer with the assistant role;
 * `content_block_start` of a `tool_use` opens a tool call; `content_block_delta` carries `text_delta`,
 * `thinking_delta` (→ `reasoning_content`) and `input_json_delta` (→ the call's arguments); a thinking block's
 * signature (`signature_delta`) and a `redacted_thinking` block come whole as `thinking_blocks`; `message_delta` the
 * stop reason and the cumulative output usage; `message_stop` ends it; `ping` is skipped; `error` (e.g.
 * `overloaded_error` after the 200) ends the stream with that error.
 */
import { eventRecord, type SseEvent } from '../../sse.ts';
import { asString, chatChunk, isRecord, type Json, nowSeconds } from '../canonical.ts';
import type { DecodedEvent, StreamDecoder } from '../format.ts';
import { FINISH_OF_STOP } from './chat.ts';
import { anthropicStreamError } from './errors.ts';
import { createAnthropicUsageTracker } from './usage.ts';

const NONE: DecodedEvent = { chunks: [] };

export function createAnthropicDecoder(model: string): StreamDecoder {
  const usage = createAnthropicUsageTracker();
  let id = 'msg';
  let answerModel = model;
  const created = nowSeconds();
  /** Content block index → tool call index, for the blocks that are tool calls. */
  const toolIndex = new Map<number, number>();
  /** Content block index → the thinking block being read (its text and signature), for signed thinking. */
  const thinking = new Map<number, { text: string; signature: string }>();
  const chunk = (delta: Json, finish: string | null = null) =>
    chatChunk(id, answerModel, created, delta, finish);

  return {
    usage: usage.current,
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return NONE;
      const type = asString(payload.type) ?? event.event;
      switch (type) {
        case 'message_start': {
          const message = isRecord(payload.message) ? payload.message : {};
          id = asString(message.id) ?? id;
          answerModel = asString(message.model) ?? answerModel;
          usage.add(message.usage);
          return { chunks: [chunk({ role: 'assistant', content: '' })] };
        }
        case 'content_block_start': {
          const block = isRecord(payload.content_block) ? payload.content_block : {};
          const index = typeof payload.index === 'number' ? payload.index : 0;
          if (block.type === 'tool_use') {
            const call = toolIndex.size;
            toolIndex.set(index, call);
            return {
              chunks: [
                chunk({
                  tool_calls: [
                    {
                      index: call,
                      id: block.id,
                      type: 'function',
                      function: { name: block.name, arguments: '' },
                    },
                  ],
                }),
              ],
            };
          }
          if (block.type === 'text' && typeof block.text === 'string' && block.text !== '')
            return { chunks: [chunk({ content: block.text })] };
          if (block.type === 'thinking') {
            thinking.set(index, { text: '', signature: asString(block.signature) ?? '' });
            const text = asString(block.thinking) ?? '';
            if (text === '') return NONE;
            (thinking.get(index) as { text: string }).text = text;
            return { chunks: [chunk({ reasoning_content: text })] };
          }
          if (block.type === 'redacted_thinking' && typeof block.data === 'string')
            return {
              chunks: [chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: block.data }] })],
            };
          return NONE;
        }
        case 'content_block_delta': {
          const delta = isRecord(payload.delta) ? payload.delta : {};
          if (delta.type === 'text_delta' && typeof delta.text === 'string')
            return { chunks: [chunk({ content: delta.text })] };
          const index = typeof payload.index === 'number' ? payload.index : 0;
          if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
            const held = thinking.get(index);
            if (held) held.text += delta.thinking;
            return { chunks: [chunk({ reasoning_content: delta.thinking })] };
          }
          if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
            const held = thinking.get(index);
            if (held) held.signature += delta.signature;
            return NONE;
          }
          // A server tool's input (web search's query) is Anthropic's own business, not a call for the client.
          if (
            delta.type === 'input_json_delta' &&
            typeof delta.partial_json === 'string' &&
            toolIndex.has(index)
          ) {
            const call = toolIndex.get(index) ?? 0;
            return {
              chunks: [chunk({ tool_calls: [{ index: call, function: { arguments: delta.partial_json } }] })],
            };
          }
          return NONE;
        }
        case 'content_block_stop': {
          // A whole signed thinking block, for the clients that keep it (canonical.ts).
          const index = typeof payload.index === 'number' ? payload.index : 0;
          const held = thinking.get(index);
          thinking.delete(index);
          if (!held || held.signature === '') return NONE;
          const block = { type: 'thinking', thinking: held.text, signature: held.signature };
          return { chunks: [chunk({ thinking_blocks: [block] })] };
        }
        case 'message_delta': {
          usage.add(payload.usage);
          const delta = isRecord(payload.delta) ? payload.delta : {};
          const stop = asString(delta.stop_reason);
          return stop ? { chunks: [chunk({}, FINISH_OF_STOP[stop] ?? 'stop')] } : NONE;
        }
        case 'message_stop':
          return { chunks: [], finished: true };
        case 'error':
          return { chunks: [], error: anthropicStreamError(payload) };
        default:
          return NONE;
      }
    },
  };
}
