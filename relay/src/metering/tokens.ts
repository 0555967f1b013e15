/**
 * Local token counting with OpenAI's BPE encodings (gpt-tokenizer): o200k_base for the gpt-4o, gpt-4.1, gpt-5
 * and o-series families, cl100k_base for everything else (reference §4.6). Used for prompt tokens before the
 * request (pre-consume) and for completion tokens when the upstream reports no usage.
 *
 * {@link createTokenCounter} counts a streamed completion without keeping it: see its comment for why its count
 * equals the count of the whole text.
 */
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { imagePartTokens } from './image-tokens.ts';

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Special-token text (`<|endoftext|>`) in user content is counted as plain text, never rejected. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** The encodings of the models seen, by name (a handful; the map is emptied if it ever grows past 1,024). */
const encodings = new Map<string, EncodingName>();

/** The encoding of a model family; unknown models use cl100k_base, as the reference does. */
export function encodingForModel(model: string): EncodingName {
  let encoding = encodings.get(model);
  if (encoding === undefined) {
    encoding = encodingOfFamily(model);
    if (encodings.size >= 1024) encodings.clear();
    encodings.set(model, encoding);
  }
  return encoding;
}

function encodingOfFamily(model: string): EncodingName {
  const name = model.toLowerCase();
  if (
    name.startsWith('gpt-4o') ||
    name.startsWith('chatgpt-4o') ||
    name.startsWith('gpt-4.1') ||
    name.startsWith('gpt-4.5') ||
    name.startsWith('gpt-5') ||
    name.startsWith('gpt-oss') ||
    /^o\d/.test(name) ||
    name.startsWith('codex-')
  ) {
    return 'o200k_base';
  }
  return 'cl100k_base';
}

const countWith = (text: string, encoding: EncodingName): number =>
  encoding === 'o200k_base' ? countO200k(text, AS_TEXT) : countCl100k(text, AS_TEXT);

/**
 * Texts up to this long have their counts kept: every message's role, names, and the short system prompts and
 * greetings that calls repeat. Counting even a one-word text costs the tokenizer a few microseconds of fixed work
 * (it builds its splitting regular expression anew for each text), twice per message.
 */
const SHORT_TEXT = 64;
/** Short texts whose counts are kept, per encoding, at most; the map is emptied when it is full. */
const SHORT_KEPT = 4096;
const shortCounts: Record<EncodingName, Map<string, number>> = {
  o200k_base: new Map(),
  cl100k_base: new Map(),
};

function countShortText(text: string, encoding: EncodingName): number {
  const kept = shortCounts[encoding];
  let tokens = kept.get(text);
  if (tokens === undefined) {
    tokens = countWith(text, encoding);
    if (kept.size >= SHORT_KEPT) kept.clear();
    kept.set(text, tokens);
  }
  return tokens;
}

/**
 * Texts this long are long (a pasted file, a coding agent's conversation): their counts are kept (see
 * {@link countedLongTexts}), and {@link countLongTexts} counts them a slice at a time.
 */
export const LONG_TEXT = 16 * 1024;
/** The characters of long texts whose counts are kept, at most (their strings are held while kept). */
const KEPT_CHARS = 4 * 1024 * 1024;

/**
 * Counts of long texts, oldest first. A coding agent sends the whole conversation at every turn, so its earlier
 * messages come again and again: each is counted once. (A string key longer than 16 K characters is hashed by its
 * length in V8, so a lookup costs a comparison with the kept texts of that length, not a pass over the text.)
 */
const countedLongTexts = new Map<string, Partial<Record<EncodingName, number>>>();
let keptChars = 0;

function keepCount(text: string, encoding: EncodingName, tokens: number): void {
  const counts = countedLongTexts.get(text);
  if (counts) {
    counts[encoding] = tokens;
    return;
  }
  countedLongTexts.set(text, { [encoding]: tokens });
  keptChars += text.length;
  // The newest is kept even past the limit (alone then): the call that counted it reads its count next.
  for (const oldest of countedLongTexts.keys()) {
    if (keptChars <= KEPT_CHARS || oldest === text) break;
    countedLongTexts.delete(oldest);
    keptChars -= oldest.length;
  }
}

const keptCount = (text: string, encoding: EncodingName): number | undefined =>
  countedLongTexts.get(text)?.[encoding];

/** Tokens in a text with the given encoding. */
export function countTextTokens(text: string, encoding: EncodingName): number {
  if (text === '') return 0;
  if (text.length <= SHORT_TEXT) return countShortText(text, encoding);
  if (text.length < LONG_TEXT) return countWith(text, encoding);
  const kept = keptCount(text, encoding);
  if (kept !== undefined) return kept;
  let tokens = 0;
  for (let start = 0; start < text.length; ) {
    const end = sliceEnd(text, start);
    tokens += countWith(text.slice(start, end), encoding);
    start = end;
  }
  keepCount(text, encoding, tokens);
  return tokens;
}

/** How much of a long text is counted at a time (about 2-4 ms of counting). */
const SLICE = 8 * 1024;

/**
 * Counts the long texts of a request before its count is read, a slice at a time, letting the event loop through
 * between slices: a 200,000-token prompt takes 85-160 ms to count, and counted at once it would hold every stream
 * of the process for that long. The count is the one {@link countTextTokens} gives, and is kept for it to find.
 */
export async function countLongTexts(texts: readonly string[], model: string): Promise<void> {
  const encoding = encodingForModel(model);
  for (const text of texts) {
    if (text.length < LONG_TEXT || keptCount(text, encoding) !== undefined) continue;
    let tokens = 0;
    for (let start = 0; start < text.length; ) {
      const end = sliceEnd(text, start);
      tokens += countWith(text.slice(start, end), encoding);
      start = end;
      await new Promise((resolve) => setImmediate(resolve));
    }
    keepCount(text, encoding, tokens);
  }
}

/**
 * Where the slice of a long text that begins at `start` ends: at the first exact cut (see {@link safeCut}) past
 * `SLICE` characters, so the slices' counts add up to the whole text's; where there is none for `FORCE_CUT_AT`
 * characters more (a long run of CJK letters, base64), at that point (never inside a surrogate pair), as the
 * streamed counter does: BPE time grows with the square of a piece's length (a 16 K-character run without a space
 * takes half a second), and such a cut changes the count by a token or so.
 */
function sliceEnd(text: string, start: number): number {
  const from = start + SLICE;
  if (from >= text.length - 1) return text.length;
  const last = Math.min(from + FORCE_CUT_AT, text.length - 1);
  for (let i = from; i < last; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 32) {
      if (!isSpace(text.charCodeAt(i - 1)) && !isSpace(text.charCodeAt(i + 1))) return i;
    } else if (code === 10 && isWordChar(text.charAt(i + 1))) {
      return i + 1;
    }
  }
  if (last === text.length - 1) return text.length;
  const code = text.charCodeAt(last - 1);
  return code >= 0xd800 && code <= 0xdbff ? last - 1 : last;
}

export interface TokenCounter {
  /** Adds the next piece of output text. */
  push(text: string): void;
  /** Tokens of everything pushed so far. */
  total(): number;
  /** Characters held back, waiting for a safe cut (bounded; for tests and metrics). */
  readonly pendingLength: number;
}

/** Text waiting to be counted is cut once it reaches this many characters. */
const CUT_AT = 512;
/**
 * Text without a safe cut (a long run of CJK letters, base64) is cut anyway at this size. BPE time grows with
 * the square of a piece's length (one 48 K-character CJK piece takes seconds), so the cut also bounds CPU.
 */
const FORCE_CUT_AT = 2048;

const isSpace = (code: number) =>
  code === 32 || code === 9 || code === 10 || code === 13 || code === 12 || code === 11;
const isWordChar = (char: string) => /[\p{L}\p{N}]/u.test(char);

/**
 * The last position where the text can be cut without changing its token count, or -1.
 *
 * Both encodings first split text into pieces with a regular expression, then apply BPE within each piece, so
 * counting two parts separately gives the same total as counting the whole exactly when no piece spans the cut.
 * No piece pattern contains a space after a non-space character, so a cut just *before* a single space that sits
 * between two non-space characters is exact ("hello| world"); likewise a cut after a line break that is
 * followed by a letter or digit ("line\n|Next").
 */
function safeCut(text: string, from: number): number {
  for (let i = text.length - 2; i > Math.max(from - 2, 0); i -= 1) {
    const code = text.charCodeAt(i);
    if (code === 32) {
      if (!isSpace(text.charCodeAt(i - 1)) && !isSpace(text.charCodeAt(i + 1))) return i;
    } else if (code === 10 && isWordChar(text.charAt(i + 1))) {
      return i + 1;
    }
  }
  return -1;
}

/**
 * An incremental counter for a streamed completion. Memory is bounded: text is counted and dropped as soon as
 * a cut that keeps the count exact is available (see {@link safeCut}), so the result equals counting the whole
 * output at once. Only text with no space or line break for {@link FORCE_CUT_AT} characters (long CJK runs,
 * base64) is cut at an arbitrary character boundary (never inside a surrogate pair); each such cut may change the
 * count by a token or so against a whole-text count (measured: under 0.1% on CJK text).
 */
export function createTokenCounter(model: string): TokenCounter {
  const encoding = encodingForModel(model);
  let pending = '';
  let counted = 0;
  // The part of `pending` already known to hold no safe cut: it is not scanned again.
  let scanned = 0;
  const flush = (force: boolean) => {
    let cut = safeCut(pending, scanned);
    if (cut <= 0 && force) {
      cut = pending.length - 1;
      const code = pending.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    if (cut <= 0) {
      scanned = pending.length;
      return;
    }
    counted += countTextTokens(pending.slice(0, cut), encoding);
    pending = pending.slice(cut);
    scanned = 0;
  };
  return {
    push(text) {
      if (text === '') return;
      pending += text;
      if (pending.length >= CUT_AT) flush(pending.length >= FORCE_CUT_AT);
    },
    total() {
      return counted + countTextTokens(pending, encoding);
    },
    get pendingLength() {
      return pending.length;
    },
  };
}

/** A chat message as far as counting is concerned. */
export interface CountableMessage {
  readonly role?: unknown;
  readonly name?: unknown;
  readonly content?: unknown;
}

/** Placeholders of the reference for parts it does not count. */
export const AUDIO_PART_TOKENS = 100;
export const FILE_PART_TOKENS = 5000;

function contentTokens(content: unknown, encoding: EncodingName, model: string): number {
  if (typeof content === 'string') return countTextTokens(content, encoding);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue;
    const { type, text } = part as { type?: unknown; text?: unknown };
    if (typeof text === 'string') total += countTextTokens(text, encoding);
    else if (type === 'image_url') total += imagePartTokens(model, part);
    else if (type === 'input_audio') total += AUDIO_PART_TOKENS;
    else if (type === 'file') total += FILE_PART_TOKENS;
  }
  return total;
}

/**
 * Prompt tokens of a chat request (reference §4.6): per message `3 + role + content` (+1 + name), +3 for the
 * reply priming, and for tools `8 + name + description + parameters` each. (The reference counted only the last
 * tool's text; every tool is counted here.)
 */
export function countChatPromptTokens(
  model: string,
  messages: readonly CountableMessage[],
  tools: readonly unknown[] = [],
): number {
  const encoding = encodingForModel(model);
  let total = 3;
  for (const message of messages) {
    total += 3;
    if (typeof message.role === 'string') total += countTextTokens(message.role, encoding);
    total += contentTokens(message.content, encoding, model);
    if (typeof message.name === 'string') total += 1 + countTextTokens(message.name, encoding);
  }
  for (const tool of tools) {
    const fn = (tool as { function?: { name?: unknown; description?: unknown; parameters?: unknown } })
      .function;
    if (!fn) continue;
    const text = [
      fn.name,
      fn.description,
      fn.parameters === undefined ? undefined : JSON.stringify(fn.parameters),
    ]
      .filter((part): part is string => typeof part === 'string')
      .join('');
    total += 8 + countTextTokens(text, encoding);
  }
  return total;
}

/** Prompt tokens of a completions prompt or an embeddings/moderations input (string or list of strings). */
export function countInputTokens(model: string, input: unknown): number {
  const encoding = encodingForModel(model);
  if (typeof input === 'string') return countTextTokens(input, encoding);
  if (!Array.isArray(input)) return 0;
  let total = 0;
  for (const item of input) {
    if (typeof item === 'string') total += countTextTokens(item, encoding);
    else if (Array.isArray(item)) total += item.length; // already token ids
  }
  return total;
}
