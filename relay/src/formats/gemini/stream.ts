/**
 * Gemini streams (`streamGenerateContent?alt=sse`, https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent):
 * every `data:` event is a whole `GenerateContentResponse` with the next parts of the first candidate; a
 * `functionCall` part arrives whole; `finishReason` marks the last; `usageMetadata` holds the counts so far.
 * There is no end marker: the stream is complete once a finish reason came.
 */
import type { NormalisedUsage } from '../../contract.ts';
import { eventRecord, type SseEvent } from '../../sse.ts';
import { asString, chatChunk, isRecord, type Json, nowSeconds } from '../canonical.ts';
import type { DecodedEvent, StreamDecoder } from '../format.ts';
import { finishOf, readParts } from './chat.ts';
import { readGeminiError } from './errors.ts';
import { GeminiCharges, normaliseGeminiUsage } from './usage.ts';

const NONE: DecodedEvent = { chunks: [] };

export function createGeminiDecoder(model: string): StreamDecoder {
  let usage: NormalisedUsage | undefined;
  let id = 'gemini';
  let answerModel = model;
  const created = nowSeconds();
  let started = false;
  let calls = 0;
  // The searches and images of the chunks so far, added to the usage (usage.ts).
  const charges = new GeminiCharges();
  return {
    usage: () => usage && charges.applyTo(usage, answerModel),
    push(event: SseEvent): DecodedEvent {
      const payload = eventRecord(event);
      if (!payload) return NONE;
      if (isRecord(payload.error)) return { chunks: [], error: { ...readGeminiError(502, event.data) } };
      id = asString(payload.responseId) ?? id;
      answerModel = asString(payload.modelVersion) ?? answerModel;
      const reported = normaliseGeminiUsage(payload.usageMetadata);
      if (reported) usage = reported;
      charges.add(payload);
      const chunks: Json[] = [];
      const chunk = (delta: Json, finish: string | null = null) =>
        chatChunk(id, answerModel, created, delta, finish);
      if (!started) {
        started = true;
        chunks.push(chunk({ role: 'assistant', content: '' }));
      }
      const candidate = Array.isArray(payload.candidates) ? payload.candidates[0] : undefined;
      const { text, reasoning, calls: found } = readParts(candidate);
      if (reasoning !== '') chunks.push(chunk({ reasoning_content: reasoning }));
      if (text !== '') chunks.push(chunk({ content: text }));
      for (const call of found) {
        chunks.push(
          chunk({
            tool_calls: [
              {
                index: calls,
                id: asString(call.id) ?? `call_${calls}`,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
              },
            ],
          }),
        );
        calls += 1;
      }
      const reason = isRecord(candidate) ? asString(candidate.finishReason) : undefined;
      if (reason !== undefined) {
        chunks.push(chunk({}, finishOf(reason, calls > 0)));
        return { chunks, finished: true };
      }
      return { chunks };
    },
  };
}
