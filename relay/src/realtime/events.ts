import { isRecord, type Json } from '@turnpike/core/json';

export type { Json };
/**
 * What the realtime relay reads of the events passing through a session (docs/adr/0032). Audio frames are large
 * and frequent, so an event's type is read from the head of its text with a pattern, and only the rare events
 * that matter to billing (`session.update`, `response.create`, `conversation.item.create` from the client;
 * `response.created`, `response.done` and `error` from the upstream) are parsed whole.
 */

/** The most output tokens one response may produce when neither the client nor the session set fewer. */
export const RESPONSE_OUTPUT_CAP = 4096;

/**
 * Audio is 24 kHz 16-bit PCM in base64 (OpenAI's default): 100 ms is 4,800 bytes, 6,400 base64 characters. OpenAI
 * counts about one input audio token per 100 ms and one output audio token per 50 ms.
 */
const BASE64_CHARS_PER_INPUT_AUDIO_TOKEN = 6400;
const BASE64_CHARS_PER_OUTPUT_AUDIO_TOKEN = 3200;
/** Text estimates stay on the high side: three characters a token. */
const CHARS_PER_TEXT_TOKEN = 3;

const TYPE_AT_HEAD = /"type"\s*:\s*"([^"]{1,80})"/;
const HEAD_LENGTH = 200;

/** The event's `type`, read from the head of its text; the whole text is parsed only when the head lacks it. */
export function eventTypeOf(text: string): string | undefined {
  const head = TYPE_AT_HEAD.exec(text.length > HEAD_LENGTH ? text.slice(0, HEAD_LENGTH) : text);
  if (head) return head[1];
  const parsed = parseEvent(text);
  return typeof parsed?.type === 'string' ? parsed.type : undefined;
}

/** The type of an event as it arrived: only the frame's head is decoded, unless the type is not in it. */
export function frameTypeOf(frame: Buffer): string | undefined {
  const head = TYPE_AT_HEAD.exec(frame.toString('utf8', 0, HEAD_LENGTH));
  return head ? head[1] : eventTypeOf(frame.toString('utf8'));
}

/** The event as an object, or undefined when it is not a JSON object. */
export function parseEvent(text: string): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Input tokens an `input_audio_buffer.append` adds, from its size (its base64 audio is nearly all of it). */
export const appendedAudioTokens = (frameLength: number): number =>
  Math.ceil(frameLength / BASE64_CHARS_PER_INPUT_AUDIO_TOKEN);

/** Input tokens a `conversation.item.create` adds: its text and its audio. */
export function itemTokens(event: Json): number {
  const item = isRecord(event.item) ? event.item : {};
  const parts = Array.isArray(item.content) ? item.content : [];
  let tokens = 0;
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') tokens += Math.ceil(part.text.length / CHARS_PER_TEXT_TOKEN);
    if (typeof part.transcript === 'string')
      tokens += Math.ceil(part.transcript.length / CHARS_PER_TEXT_TOKEN);
    if (typeof part.audio === 'string') tokens += appendedAudioTokens(part.audio.length);
  }
  // A function call's output and arguments are text too.
  for (const field of ['output', 'arguments'] as const)
    if (typeof item[field] === 'string') tokens += Math.ceil(item[field].length / CHARS_PER_TEXT_TOKEN);
  return tokens;
}

const AUDIO_DELTAS = new Set(['response.audio.delta', 'response.output_audio.delta']);
const TEXT_DELTAS = new Set([
  'response.text.delta',
  'response.output_text.delta',
  'response.function_call_arguments.delta',
]);

/**
 * Output tokens a delta event carries, counted for a response the session ends before its `response.done`:
 * audio by its size, text by its length (a transcript repeats the audio and is not counted).
 */
export function deltaTokens(
  type: string,
  frame: Buffer | string,
): { readonly audio: number; readonly text: number } {
  if (AUDIO_DELTAS.has(type))
    return { audio: Math.ceil(frame.length / BASE64_CHARS_PER_OUTPUT_AUDIO_TOKEN), text: 0 };
  if (!TEXT_DELTAS.has(type)) return NO_TOKENS;
  const delta = parseEvent(frame.toString())?.delta;
  return typeof delta === 'string'
    ? { audio: 0, text: Math.ceil(delta.length / CHARS_PER_TEXT_TOKEN) }
    : NO_TOKENS;
}
const NO_TOKENS = { audio: 0, text: 0 } as const;

/** A client's output limit (`inf` or absent: none), as a number of tokens. */
const limitOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;

/** The output limit a response is held and capped at: the client's (or the session's) when lower than the cap. */
export const outputCapOf = (requested: number | undefined): number =>
  Math.min(requested ?? RESPONSE_OUTPUT_CAP, RESPONSE_OUTPUT_CAP);

/**
 * The session's own output limit field: `max_response_output_tokens` in the beta shape, `max_output_tokens` in
 * the GA one.
 */
export const sessionLimitField = (isBeta: boolean): string =>
  isBeta ? 'max_response_output_tokens' : 'max_output_tokens';

/**
 * A `session.update` with its output limit capped; answers the client's own limit too, so responses the session
 * starts on its own (voice activity) are held at the limit the upstream will keep.
 */
export function capSessionUpdate(
  event: Json,
  isBeta: boolean,
): { event: Json; requested: number | undefined } {
  const session = isRecord(event.session) ? event.session : {};
  const field = sessionLimitField(isBeta);
  const requested = limitOf(session[field]);
  return { event: { ...event, session: { ...session, [field]: outputCapOf(requested) } }, requested };
}

/** A `response.create` with its output limit set: the client's, the session's, or the cap, whichever is lowest. */
export function capResponseCreate(
  event: Json,
  sessionLimit: number | undefined,
): { event: Json; outputCap: number } {
  const response = isRecord(event.response) ? event.response : {};
  const requested = limitOf(response.max_output_tokens) ?? limitOf(response.max_response_output_tokens);
  const outputCap = outputCapOf(requested ?? sessionLimit);
  return { event: { ...event, response: { ...response, max_output_tokens: outputCap } }, outputCap };
}

/** `response.done`'s usage in the shape `normaliseOpenAiUsage` reads (realtime names its details `*_token_details`). */
export function realtimeUsageOf(event: Json): Json | undefined {
  const response = isRecord(event.response) ? event.response : undefined;
  const usage = response && isRecord(response.usage) ? response.usage : undefined;
  if (!usage) return undefined;
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    input_tokens_details: usage.input_token_details ?? usage.input_tokens_details,
    output_tokens_details: usage.output_token_details ?? usage.output_tokens_details,
  };
}

/** The response id an upstream event is about (`response.created` / `response.done`: `response.id`). */
export function responseIdOf(event: Json): string | undefined {
  const response = isRecord(event.response) ? event.response : undefined;
  return typeof response?.id === 'string' ? response.id : undefined;
}

/** The `event_id` of the client event an upstream `error` answers, when it names one. */
export function erroredEventIdOf(event: Json): string | undefined {
  const error = isRecord(event.error) ? event.error : undefined;
  return typeof error?.event_id === 'string' ? error.event_id : undefined;
}

/** An `error` server event, as the relay sends its own refusals inside a session. */
export function errorEvent(code: string, message: string, eventId?: string): string {
  return JSON.stringify({
    type: 'error',
    event_id: `event_turnpike_${Date.now().toString(36)}`,
    error: {
      type:
        code === 'insufficient_quota'
          ? 'insufficient_quota'
          : code === 'rate_limit_exceeded'
            ? 'rate_limit_error'
            : 'invalid_request_error',
      code,
      message,
      param: null,
      event_id: eventId ?? null,
    },
  });
}
