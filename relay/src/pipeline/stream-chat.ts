/**
 * The reader of an OpenAI chat/completions stream for an OpenAI client (`data: {...}` … `[DONE]`): read in place,
 * a plain chunk passed on unread once the head is out, usage taken from the upstream's last chunk.
 */
import { streamErrorOf } from '../formats/openai/stream.ts';
import { hasUsage, normaliseOpenAiUsage } from '../metering/usage.ts';
import { formatSseEvent, formatSseJson, isDoneEvent } from '../sse.ts';
import { isRecord, type Json } from './respond.ts';
import type { StreamReader, StreamState } from './stream-state.ts';

/** Raw chunk text kept unparsed per stream, at most (see `plainChunk`); past it, chunks are read as they come. */
const DEFERRED_LIMIT = 256 * 1024;

/**
 * The unread chunk text all of a process's streams keep together, and its limit. A stream's own limit alone lets
 * 2,000 long answers keep 500 MiB (256 KiB each); past the shared limit, the stream that adds to it reads what it
 * kept (its memory goes back as it is read) instead of keeping more.
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

export function createChatReader(
  state: StreamState,
  body: Json,
  budget: UnreadBudget = PROCESS_UNREAD_BUDGET,
): StreamReader {
  const { writer, redactor } = state;
  const clientAskedUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  // Once the head is out, a plain chunk is passed on unread and kept raw: it is read only when the upstream
  // ends without reporting usage (its text is counted then), or when the kept text passes this stream's limit
  // or the process's.
  const deferred: string[] = [];
  let deferredSize = 0;
  /** What was kept goes out of the process's budget (read, or no longer needed). */
  const release = () => {
    budget.kept -= deferredSize;
    deferredSize = 0;
  };
  const readDeferred = () => {
    release();
    for (const data of deferred.splice(0)) {
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (!isRecord(chunk)) continue;
      state.last = chunk;
      if (Array.isArray(chunk.choices))
        for (const choice of chunk.choices) if (isRecord(choice)) state.outputChoice(choice);
    }
  };
  const passOn = (data: string) => writer.write(formatSseEvent(data));

  /** One chat/completions chunk; false stops the stream. */
  const readChunk = (data: string): boolean => {
    // While the head is held the first output is looked for in every chunk; once it is out (from the start
    // when nothing is held) a plain chunk is not read. One that may hold a credential of the channel is read.
    const plain =
      writer.isOpen && state.filter === undefined && !redactor.mayContain(data)
        ? plainChunk(data, clientAskedUsage)
        : undefined;
    if (plain !== undefined) {
      // A finish reason says the answer is whole, even from an upstream that then ends without `[DONE]`.
      if (!state.finished && (plain.includes('"finish_reason":"') || plain.includes('"finish_reason": "')))
        state.finished = true;
      deferred.push(plain);
      deferredSize += plain.length;
      budget.kept += plain.length;
      if (deferredSize > DEFERRED_LIMIT || budget.kept > budget.limit) readDeferred();
      passOn(plain);
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
      passOn(redactor.redact(data));
      return true;
    }
    if (chunk.error !== undefined && chunk.choices === undefined) {
      state.upstreamError = streamErrorOf(chunk.error);
      return false;
    }
    const usage = normaliseOpenAiUsage(chunk.usage);
    if (hasUsage(usage)) {
      state.upstreamUsage = usage;
      // The upstream's count is the bill: what was kept unread need not be counted.
      deferred.length = 0;
      release();
    } else if (deferred.length > 0) readDeferred();
    const read = state.readChoices(chunk);
    if (read === false) return false;
    if (clientAskedUsage || !('usage' in chunk)) {
      passOn(read === 'changed' ? JSON.stringify(chunk) : redactor.redact(data));
      return true;
    }
    // The client did not ask for usage: the usage-only chunk is dropped, and `usage: null` fields removed.
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    if (choices.length === 0 && chunk.usage !== null) return true;
    const { usage: _hidden, ...visible } = chunk;
    writer.write(formatSseJson(visible));
    return true;
  };

  return {
    writesEnd: true,
    read(event) {
      if (isDoneEvent(event)) {
        state.finished = true;
        return true;
      }
      state.arrived();
      return readChunk(event.data);
    },
    heldFrame(index, text) {
      const { last } = state;
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
    },
    countUnread() {
      if (!hasUsage(state.upstreamUsage)) readDeferred();
      else {
        // Chunks after the usage chunk were passed on unread: the upstream's count still is the bill.
        deferred.length = 0;
        release();
      }
    },
  };
}
