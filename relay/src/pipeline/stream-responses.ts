/**
 * The reader of an OpenAI Responses API stream for a Responses client (`event: response.*`, usage in
 * `response.completed`): every event passed through as it came (name and data), masked when sensitive words are
 * checked.
 */
import { streamErrorOf } from '../formats/openai/stream.ts';
import { openAiAnswerUsage } from '../formats/openai/usage.ts';
import { hasUsage } from '../metering/usage.ts';
import { formatSseEvent, formatSseNamedJson, isDoneEvent, type SseEvent } from '../sse.ts';
import { isRecord, type Json } from './respond.ts';
import { SENSITIVE_REPLACEMENT } from './sensitive-words.ts';
import type { StreamReader, StreamState } from './stream-state.ts';

const DELTA = 'response.output_text.delta';

/** Where a text lives in the answer, as the filter's key: output index and content index. */
const textKey = (payload: Json): number =>
  (typeof payload.output_index === 'number' ? payload.output_index : 0) * 1024 +
  (typeof payload.content_index === 'number' ? payload.content_index : 0);

/** Masks every complete output text a Responses API event repeats (`.done` events, `response.completed`). */
function maskTexts(state: StreamState, payload: Json): boolean {
  const { check } = state;
  if (!check) return false;
  let changed = false;
  const mask = (holder: unknown) => {
    if (!isRecord(holder) || typeof holder.text !== 'string') return;
    const masked = check.words.matcher.replaceAll(holder.text, SENSITIVE_REPLACEMENT);
    if (masked !== holder.text) {
      holder.text = masked;
      changed = true;
    }
  };
  const maskItem = (item: unknown) => {
    if (isRecord(item) && Array.isArray(item.content)) for (const part of item.content) mask(part);
  };
  mask(payload);
  mask(payload.part);
  maskItem(payload.item);
  if (isRecord(payload.response) && Array.isArray(payload.response.output))
    for (const item of payload.response.output) maskItem(item);
  return changed;
}

export function createResponsesReader(state: StreamState): StreamReader {
  return new ResponsesReader(state);
}

/** One stream's reader, an object rather than closures (a process holds thousands at once). */
class ResponsesReader implements StreamReader {
  readonly writesEnd = false;
  private readonly state: StreamState;

  constructor(state: StreamState) {
    this.state = state;
  }

  read(event: SseEvent): boolean {
    const { state } = this;
    if (isDoneEvent(event)) {
      state.finished = true;
      return true;
    }
    state.arrived();
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      payload = undefined;
    }
    const type = event.event ?? (isRecord(payload) && typeof payload.type === 'string' ? payload.type : '');
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed')
      state.finished = true;
    if (type === 'error' && isRecord(payload)) {
      state.upstreamError = streamErrorOf(payload);
      return false;
    }
    let changed = false;
    if (isRecord(payload)) {
      if (type.endsWith('.delta') && typeof payload.delta === 'string') state.output(payload.delta);
      const inner = isRecord(payload.response) ? payload.response : undefined;
      if (inner) state.last = inner;
      const usage = inner && openAiAnswerUsage(inner);
      if (hasUsage(usage)) state.upstreamUsage = usage;
      const filtered = this.filterText(event, type, payload);
      if (filtered === undefined) return false;
      changed = filtered;
    }
    const data = changed ? JSON.stringify(payload) : state.redactor.redact(event.data);
    state.writer.write(formatSseEvent(data, { event: event.event }));
    return true;
  }

  heldFrame(key: number, delta: string): string {
    return formatSseNamedJson(DELTA, {
      type: DELTA,
      output_index: Math.floor(key / 1024),
      content_index: key % 1024,
      delta,
    });
  }

  /** Runs a text event through the sensitive-word filter; undefined when the answer must stop. */
  private filterText(event: SseEvent, type: string, payload: Json): boolean | undefined {
    const { state } = this;
    const { filter } = state;
    if (!filter) return false;
    let changed = false;
    if (type === DELTA && typeof payload.delta === 'string') {
      const shown = state.filtered(filter.push(textKey(payload), payload.delta));
      if (shown === undefined) return undefined;
      changed = shown !== payload.delta;
      payload.delta = shown;
    } else if (type === 'response.output_text.done') {
      const rest = state.filtered(filter.flush(textKey(payload)));
      if (rest === undefined) return undefined;
      if (rest !== '') {
        const { text: _full, ...fields } = payload;
        const delta = { ...fields, type: DELTA, delta: rest };
        state.writer.write(formatSseEvent(JSON.stringify(delta), { event: event.event && DELTA }));
      }
    }
    return maskTexts(state, payload) || changed;
  }
}
