/**
 * The reader of an OpenAI chat/completions stream for an OpenAI client (`data: {...}` … `[DONE]`): read in place,
 * a plain chunk passed on unread once the head is out, usage taken from the upstream's last chunk.
 */
import { streamErrorOf } from '../formats/openai/stream.ts';
import { openAiAnswerUsage } from '../formats/openai/usage.ts';
import { hasUsage } from '../metering/usage.ts';
import { formatSseEvent, formatSseJson, isDoneEvent, type SseEvent } from '../sse.ts';
import { isRecord, type Json } from './respond.ts';
import type { StreamReader, StreamState } from './stream-state.ts';

/**
 * Chunk text passed on unread per stream, at most, before what was kept of it is read (see `plainChunk` and
 * `UnreadChunks`: what is kept is mostly the chunks' output text, a small part of their size).
 */
const DEFERRED_LIMIT = 256 * 1024;

/**
 * The chunk text all of a process's streams passed on unread and keep (in part) together, and its limit. A stream's
 * own limit alone lets 2,000 long answers pass 500 MiB unread (256 KiB each); past the shared limit, the stream that
 * adds to it reads what it kept (its memory goes back as it is read) instead of keeping more.
 */
export interface UnreadBudget {
  kept: number;
  readonly limit: number;
}

/** The process's budget: 32 MiB, the per-stream limit for 128 streams at once. */
const PROCESS_UNREAD_BUDGET: UnreadBudget = { kept: 0, limit: 32 * 1024 * 1024 };

/** `: null` after a `"usage"` key, with the JSON whitespace around it. */
const NULL_VALUE = /^[ \t\r\n]*:[ \t\r\n]*null[ \t\r\n]*/;
const isJsonSpace = (code: number) => code === 32 || code === 10 || code === 13 || code === 9;

/**
 * The text a chat chunk is passed on as without being read, or undefined when it must be read.
 * - A chunk that names no usage passes as it is.
 * - One whose only mention of usage is `"usage": null` (the upstream puts it in every chunk once the relay asks
 *   for usage) passes as it is when the client asked for usage too, and otherwise with that member cut out.
 * A quote inside a JSON string is escaped, so `"usage"` followed by a colon is a key; anything else (a string
 * `"usage"`, a second mention, an unexpected shape) answers undefined and the chunk is read.
 */
export function plainChunk(data: string, clientAskedUsage: boolean): string | undefined {
  const at = data.indexOf('"usage"');
  if (at === -1) return data;
  if (data.indexOf('"usage"', at + 7) !== -1) return undefined;
  const value = NULL_VALUE.exec(data.slice(at + 7, at + 32));
  if (value === null) return undefined;
  const end = at + 7 + value[0].length;
  const next = data.charCodeAt(end);
  if (next !== 44 /* , */ && next !== 125 /* } */) return undefined;
  if (clientAskedUsage) return data;
  if (next === 44) return data.slice(0, at) + data.slice(end + 1);
  // The object's last member: the comma before it goes with it.
  let start = at;
  while (start > 0 && isJsonSpace(data.charCodeAt(start - 1))) start -= 1;
  const before = data.charCodeAt(start - 1);
  if (before === 44) start -= 1;
  else if (before !== 123 /* { */) return undefined;
  return data.slice(0, start) + data.slice(end);
}

/** Where the text a chat chunk produced lives, in the commonest shape: `"choices":[{…,"delta":{"content":"…"}`. */
const DELTA_CONTENT = '"delta":{"content":"';
/** Keys under which a chunk carries output text (see `StreamState.outputChoice`). */
const OUTPUT_KEYS = ['"content"', '"text"', '"reasoning_content"', '"tool_calls"'] as const;

/**
 * The output text of a plain chunk, read without parsing it, or undefined when it must be parsed: `''` when it names
 * no output key at all (a role or finish chunk), the delta's content when that is its only output: one choice,
 * at the top level, whose delta holds the content alone, and nothing after it that opens an object or an array,
 * escapes a character or repeats the delta or the choices. The text is a copy, so keeping it keeps none of the
 * upstream's piece. A few searches, cheaper than parsing the chunk. (A chunk that is not JSON at all but has that
 * shape is counted, where parsed it would be skipped.)
 */
export function plainOutput(data: string): string | undefined {
  const at = data.indexOf(DELTA_CONTENT);
  if (at === -1) {
    // An escaped key (`"\\u0063ontent"`) reads as one: such a chunk is parsed.
    if (data.includes('\\u') || OUTPUT_KEYS.some((key) => data.includes(key))) return undefined;
    return '';
  }
  // The delta is a member of the one choice (no brace, bracket or escape between the choice's `{` and it), the
  // choice the first of `"choices":[`, and that at the top level (no object or array opens before it).
  let open = at - 1;
  while (open > 0 && !isStructure(data.charCodeAt(open))) open -= 1;
  if (data.charCodeAt(open) !== 123 /* { */ || !data.startsWith(CHOICES, open - CHOICES.length))
    return undefined;
  const choices = open - CHOICES.length;
  if (
    data.charCodeAt(0) !== 123 /* { */ ||
    data.charCodeAt(choices - 1) === 92 /* \\ */ ||
    data.indexOf('{', 1) !== open ||
    data.indexOf('[') !== open - 1
  )
    return undefined;
  const from = at + DELTA_CONTENT.length;
  let end = data.indexOf('"', from);
  while (end !== -1 && isEscaped(data, end)) end = data.indexOf('"', end + 1);
  if (end === -1 || data.charCodeAt(end + 1) !== 125 /* } */ || !isPlainRest(data, end + 2)) return undefined;
  // A short slice is a copy already; a longer one (or one with escapes) is read from a string of its own (a slice
  // of the chunk would keep the upstream's whole piece).
  const raw = data.slice(from, end);
  const backslash = data.indexOf('\\', from);
  if (raw.length < 13 && (backslash === -1 || backslash > end)) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

const CHOICES = '"choices":[';

/** A brace, a bracket or a backslash. */
const isStructure = (code: number): boolean =>
  code === 123 || code === 125 || code === 91 || code === 93 || code === 92;

/**
 * Whether what follows the delta only closes the choice, the array and the chunk: nothing opens an object or an
 * array or escapes a character, and no key repeats the delta or the choices (a key given twice counts the second
 * time).
 */
function isPlainRest(data: string, from: number): boolean {
  for (let i = from; i < data.length; i += 1) {
    const code = data.charCodeAt(i);
    if (code === 123 /* { */ || code === 91 /* [ */ || code === 92 /* \\ */) return false;
    if (code === 34 /* " */ && (data.startsWith('"delta"', i) || data.startsWith('"choices"', i)))
      return false;
  }
  return true;
}

/** Whether the quote at `index` is escaped (an odd run of backslashes before it). */
function isEscaped(text: string, index: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(index - 1 - slashes) === 92) slashes += 1;
  return slashes % 2 === 1;
}

/** A chunk kept whole, to be parsed when it is read. */
class WholeChunk {
  readonly data: string;
  constructor(data: string) {
    this.data = data;
  }
}

/** Output texts kept in a row are joined into one string past this many. */
const JOIN_AT = 64;

/**
 * What one stream passed on unread, in order: the output text of each chunk of the common shape (joined as it
 * grows), or the whole chunk. Charged to the budget at the size of the chunks passed, as if they were kept whole.
 */
class UnreadChunks {
  private entries: (string | WholeChunk)[] = [];
  /** Output texts at the end of `entries`, in a row. */
  private texts = 0;
  /** Characters of the chunks kept, as charged to the budget. */
  size = 0;

  keep(data: string): void {
    this.size += data.length;
    const text = plainOutput(data);
    if (text === undefined) {
      this.entries.push(new WholeChunk(data));
      this.texts = 0;
      return;
    }
    if (text === '') return;
    this.entries.push(text);
    this.texts += 1;
    if (this.texts === JOIN_AT) {
      this.entries.push(this.entries.splice(-JOIN_AT).join(''));
      this.texts = 1;
    }
  }

  /** Hands over what was kept, oldest first, and forgets it. */
  take(): (string | WholeChunk)[] {
    const { entries } = this;
    this.entries = [];
    this.texts = 0;
    this.size = 0;
    return entries;
  }
}

export function createChatReader(
  state: StreamState,
  body: Json,
  budget: UnreadBudget = PROCESS_UNREAD_BUDGET,
): StreamReader {
  const clientAskedUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  return new ChatReader(state, clientAskedUsage, budget);
}

/**
 * One stream's reader, an object rather than closures (a process holds thousands at once). Once the head is out, a
 * plain chunk is passed on unread and kept (see `UnreadChunks`): it is read only when the upstream ends without
 * reporting usage (its text is counted then), or when what was kept passes this stream's limit or the process's.
 */
class ChatReader implements StreamReader {
  readonly writesEnd = true;
  private readonly unread = new UnreadChunks();
  private readonly state: StreamState;
  private readonly clientAskedUsage: boolean;
  private readonly budget: UnreadBudget;

  constructor(state: StreamState, clientAskedUsage: boolean, budget: UnreadBudget) {
    this.state = state;
    this.clientAskedUsage = clientAskedUsage;
    this.budget = budget;
  }

  read(event: SseEvent): boolean {
    if (isDoneEvent(event)) {
      this.state.finished = true;
      return true;
    }
    this.state.arrived();
    return this.readChunk(event.data);
  }

  heldFrame(index: number, text: string): string {
    const { last } = this.state;
    const isCompletion = last.object === 'text_completion';
    const choice = isCompletion
      ? { index, text, finish_reason: null }
      : { index, delta: { content: text }, finish_reason: null };
    return formatSseJson({
      id: last.id,
      object: last.object,
      created: last.created,
      model: last.model,
      choices: [choice],
    });
  }

  countUnread(): void {
    // Chunks after the usage chunk were passed on unread: the upstream's count still is the bill.
    if (!hasUsage(this.state.upstreamUsage)) this.readUnread();
    else this.forgetUnread();
  }

  /** One chat/completions chunk; false stops the stream. */
  private readChunk(data: string): boolean {
    const { state, budget } = this;
    const { writer, redactor } = state;
    // While the head is held the first output is looked for in every chunk; once it is out (from the start
    // when nothing is held) a plain chunk is not read. One that may hold a credential of the channel is read, and
    // so is every chunk of a call that keeps a content log (its text is what the log keeps).
    const plain =
      writer.isOpen && state.filter === undefined && state.capture === undefined && !redactor.mayContain(data)
        ? plainChunk(data, this.clientAskedUsage)
        : undefined;
    if (plain !== undefined) {
      // A finish reason says the answer is whole, even from an upstream that then ends without `[DONE]`.
      if (!state.finished && (plain.includes('"finish_reason":"') || plain.includes('"finish_reason": "')))
        state.finished = true;
      this.unread.keep(plain);
      budget.kept += plain.length;
      if (this.unread.size > DEFERRED_LIMIT || budget.kept > budget.limit) this.readUnread();
      writer.write(formatSseEvent(plain));
      return true;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      chunk = undefined;
    }
    // Not a JSON object: passed on as it came (the client's parser decides), its credentials removed.
    if (!isRecord(chunk)) {
      writer.write(formatSseEvent(redactor.redact(data)));
      return true;
    }
    if (chunk.error !== undefined && chunk.choices === undefined) {
      state.upstreamError = streamErrorOf(chunk.error);
      return false;
    }
    const usage = openAiAnswerUsage(chunk);
    if (hasUsage(usage)) {
      state.upstreamUsage = usage;
      // The upstream's count is the bill: what was kept unread need not be counted.
      this.forgetUnread();
    } else if (this.unread.size > 0) this.readUnread();
    const read = state.readChoices(chunk);
    if (read === false) return false;
    if (this.clientAskedUsage || !('usage' in chunk)) {
      writer.write(formatSseEvent(read === 'changed' ? JSON.stringify(chunk) : redactor.redact(data)));
      return true;
    }
    // The client did not ask for usage: the usage-only chunk is dropped, and `usage: null` fields removed.
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    if (choices.length === 0 && chunk.usage !== null) return true;
    const { usage: _hidden, ...visible } = chunk;
    writer.write(formatSseJson(visible));
    return true;
  }

  /** Counts what was kept, and gives it back to the process's budget. */
  private readUnread(): void {
    const { state } = this;
    this.budget.kept -= this.unread.size;
    for (const entry of this.unread.take()) {
      if (typeof entry === 'string') {
        state.output(entry);
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(entry.data);
      } catch {
        continue;
      }
      if (!isRecord(chunk)) continue;
      state.last = chunk;
      if (Array.isArray(chunk.choices))
        for (const choice of chunk.choices) if (isRecord(choice)) state.outputChoice(choice);
    }
  }

  /** Lets what was kept go unread (the upstream's usage is the bill). */
  private forgetUnread(): void {
    this.budget.kept -= this.unread.size;
    this.unread.take();
  }
}
