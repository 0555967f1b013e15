/**
 * What a stream's readers (stream-chat.ts, stream-responses.ts, stream-decoded.ts) learn as they go, and the
 * counting and sensitive-word filtering they share; the ending (stream.ts) reads it to settle. Memory is the
 * incremental token counter, the filter's carry and the last chunk.
 */
import type { NormalisedUsage, RelayError, StreamEncoder } from '../contract.ts';
import { createTokenCounter, type TokenCounter } from '../metering/tokens.ts';
import type { SseEvent, SseWriter } from '../sse.ts';
import type { Redactor } from '../upstream/redact.ts';
import type { ContentCapture } from './content-capture.ts';
import { isRecord, type Json } from './respond.ts';
import {
  type CompletionCheck,
  createStreamFilter,
  type FilterStep,
  type StreamFilter,
} from './sensitive-words.ts';

/** Reads the upstream's events of one stream and writes what the client gets. */
export interface StreamReader {
  /** One upstream event; false when the stream must stop (an error event, a sensitive-word stop). */
  read(event: SseEvent): boolean;
  /** The frame carrying text the sensitive-word carry held back for choice `index`. */
  heldFrame(index: number, text: string): string;
  /** The upstream's events are over (usage a decoder kept is taken now). */
  ended?(): void;
  /** Without usage from the upstream, what was passed on unread is counted now. */
  countUnread?(): void;
  /** Whether the relay writes the end of the answer (the client's closing events) itself. */
  readonly writesEnd: boolean;
}

export interface StreamStateOptions {
  readonly model: string;
  readonly check: CompletionCheck | undefined;
  readonly writer: SseWriter;
  readonly encoder: StreamEncoder;
  readonly redactor: Redactor;
  /** The call's start, the clock of the first-token time. */
  readonly startedAt: number;
  /** Called once, at the first output (stops the first-token timer). */
  onFirstOutput(): void;
  /** The content log's capture (docs/adr/0045); absent for nearly every call. */
  readonly capture?: ContentCapture | undefined;
}

export class StreamState {
  readonly check: CompletionCheck | undefined;
  readonly writer: SseWriter;
  readonly encoder: StreamEncoder;
  readonly redactor: Redactor;
  readonly counter: TokenCounter;
  readonly filter: StreamFilter | undefined;
  /** Gets every output piece when the call keeps a content log. */
  readonly capture: ContentCapture | undefined;
  /** The usage the upstream reported, if any. */
  upstreamUsage: NormalisedUsage | undefined;
  /** Time to the first upstream event, from the call's start. */
  frtMs: number | undefined;
  sawOutput = false;
  /** The sensitive words the answer was stopped on. */
  stoppedFor: readonly string[] | undefined;
  /** The last chunk read (its id, model and time go into frames of held-back text). */
  last: Json = {};
  /** The upstream said the answer is complete. */
  finished = false;
  /** An error event the upstream sent after its 200. */
  upstreamError: RelayError | undefined;

  private readonly startedAt: number;
  private readonly onFirstOutput: () => void;

  constructor(options: StreamStateOptions) {
    this.check = options.check;
    this.writer = options.writer;
    this.encoder = options.encoder;
    this.redactor = options.redactor;
    this.startedAt = options.startedAt;
    this.onFirstOutput = options.onFirstOutput;
    this.counter = createTokenCounter(options.model);
    this.filter = options.check ? createStreamFilter(options.check) : undefined;
    this.capture = options.capture;
  }

  /** An upstream event arrived: the first one's time is the first-token time. */
  arrived(): void {
    this.frtMs ??= performance.now() - this.startedAt;
  }

  /** Counts output text; the first output stops the first-token timer and sends the held head. */
  output(text: string): void {
    if (text === '') return;
    this.counter.push(text);
    this.capture?.piece(text);
    if (!this.sawOutput) {
      this.sawOutput = true;
      this.onFirstOutput();
      this.writer.open();
    }
  }

  /** A choice's text through the sensitive filter; undefined when the answer must stop. */
  filtered(step: FilterStep): string | undefined {
    if (step.found.length > 0 && this.check?.stop) {
      this.stoppedFor = step.found;
      return undefined;
    }
    return step.text;
  }

  /** Counts what one choice of a chat/completions chunk produced; answers where its text is kept. */
  outputChoice(choice: Json): { holder: Json | undefined; field: string; text: string | undefined } {
    const delta = isRecord(choice.delta) ? choice.delta : undefined;
    // Chat keeps text in delta.content, legacy completions in choice.text.
    const holder: Json | undefined = delta ?? (typeof choice.text === 'string' ? choice : undefined);
    const field = delta ? 'content' : 'text';
    const text = holder && typeof holder[field] === 'string' ? (holder[field] as string) : undefined;
    if (text !== undefined) this.output(text);
    if (delta) {
      if (typeof delta.reasoning_content === 'string') this.output(delta.reasoning_content);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const fn = isRecord(call) ? call.function : undefined;
          if (isRecord(fn)) this.output(`${fn.name ?? ''}${fn.arguments ?? ''}`);
        }
      }
    }
    return { holder, field, text };
  }

  /**
   * Counts a chat chunk's output and runs its texts through the sensitive-word filter (changing them in place);
   * answers false when the answer must stop, else whether a text was changed.
   */
  readChoices(chunk: Json): boolean | 'changed' {
    this.last = chunk;
    let changed = false;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const ended = choice.finish_reason !== null && choice.finish_reason !== undefined;
      if (ended) this.finished = true;
      const { holder, field, text } = this.outputChoice(choice);
      const { filter } = this;
      if (filter && holder && (text !== undefined || ended)) {
        let shown = text === undefined ? '' : this.filtered(filter.push(index, text));
        if (shown === undefined) return false;
        if (ended) {
          const rest = this.filtered(filter.flush(index));
          if (rest === undefined) return false;
          shown += rest;
        }
        if (shown !== text && !(text === undefined && shown === '')) {
          holder[field] = shown;
          changed = true;
        }
      }
    }
    return changed ? 'changed' : true;
  }
}
