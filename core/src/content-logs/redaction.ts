/**
 * What content logs remove before anything is written (docs/adr/0045): API keys (`sk-…`), email addresses, card
 * numbers that pass the Luhn check, and the operator's own patterns (`ContentLogRedactPatterns`). The built-in rules
 * bound every repetition, so none of them takes more than linear time on a long prompt; an operator's pattern is
 * refused at save when it cannot compile or may take exponential time, and each use of one runs under a time limit
 * all the same, so a pattern that slips through costs a bounded moment, never a stalled process.
 */
import vm from 'node:vm';
import safeRegex from 'safe-regex2';

export const REDACTED = {
  key: '[redacted:key]',
  email: '[redacted:email]',
  card: '[redacted:card]',
  pattern: '[redacted]',
} as const;

/** `sk-` and at least 16 key characters: OpenAI's, Anthropic's (`sk-ant-…`), DeepSeek's and Turnpike's own keys. */
const API_KEY = /\bsk-[A-Za-z0-9_-]{16,}/g;
/** An address with every part bounded (RFC 5321's lengths), so a long run of letters is scanned in linear time. */
const EMAIL = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/g;
/** 13 to 19 digits, single spaces or dashes between them allowed; the Luhn check decides. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;

/** The Luhn checksum (ISO/IEC 7812-1) over the digits of `text`. */
export function passesLuhn(text: string): boolean {
  const digits = text.replace(/\D/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** How long one use of the operator's patterns may run on one text, at most. */
const PATTERN_TIME_LIMIT_MS = 100;

/** Why an operator's pattern is refused, or undefined when it may be saved. */
export function patternProblem(source: string): string | undefined {
  try {
    new RegExp(source, 'g');
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
  if (new RegExp(source).test('')) return 'matches empty text';
  if (!safeRegex(source)) return 'may take exponential time (a repetition inside a repetition)';
  return undefined;
}

/** Thrown when an operator's pattern ran past its time limit: the text cannot be told clean, so it is not kept. */
export class RedactionTimeout extends Error {
  constructor() {
    super('a redaction pattern ran past its time limit');
    this.name = 'RedactionTimeout';
  }
}

export interface Redacted {
  readonly text: string;
  /** How many things were replaced. */
  readonly count: number;
}

export type Redact = (text: string) => Redacted;

/** Runs the operator's compiled patterns in a context of their own, so the time limit can stop them. */
function customPatterns(patterns: readonly RegExp[]): Redact {
  const sandbox = vm.createContext({ patterns, input: '', output: '', count: 0, mark: REDACTED.pattern });
  const script = new vm.Script(
    'output = input; count = 0; for (const p of patterns) output = output.replace(p, () => { count += 1; return mark; });',
  );
  return (text) => {
    sandbox.input = text;
    try {
      script.runInContext(sandbox, { timeout: PATTERN_TIME_LIMIT_MS });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new RedactionTimeout();
      throw error;
    } finally {
      sandbox.input = '';
    }
    const result = { text: sandbox.output as string, count: sandbox.count as number };
    sandbox.output = '';
    return result;
  };
}

/**
 * The redaction of the built-in rules and `patterns` (refused ones, which the option never holds, are left out).
 * Throws `RedactionTimeout` when an operator's pattern runs too long on a text.
 */
export function createRedactor(patterns: readonly string[]): Redact {
  const usable = patterns.filter((p) => patternProblem(p) === undefined).map((p) => new RegExp(p, 'g'));
  const custom = usable.length > 0 ? customPatterns(usable) : undefined;
  return (text) => {
    let count = 0;
    let out = text.replace(API_KEY, () => {
      count += 1;
      return REDACTED.key;
    });
    out = out.replace(EMAIL, () => {
      count += 1;
      return REDACTED.email;
    });
    out = out.replace(CARD_CANDIDATE, (candidate) => {
      if (!passesLuhn(candidate)) return candidate;
      count += 1;
      return REDACTED.card;
    });
    if (custom) {
      const more = custom(out);
      out = more.text;
      count += more.count;
    }
    return { text: out, count };
  };
}

const encoder = new TextEncoder();

/** The longest start of `text` that is at most `maxBytes` in UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/**
 * A call's prompt and answer within `maxBytes` together: a side shorter than half keeps all of it and leaves the
 * rest to the other; both longer get half each.
 */
export function capContent(
  prompt: string,
  answer: string,
  maxBytes: number,
): { prompt: string; answer: string; truncated: boolean } {
  const promptBytes = Buffer.byteLength(prompt);
  const answerBytes = Buffer.byteLength(answer);
  if (promptBytes + answerBytes <= maxBytes) return { prompt, answer, truncated: false };
  const half = Math.floor(maxBytes / 2);
  const promptRoom = answerBytes <= half ? maxBytes - answerBytes : Math.max(half, maxBytes - answerBytes);
  const keptPrompt = cutToBytes(prompt, Math.min(promptBytes, promptRoom));
  const keptAnswer = cutToBytes(answer, maxBytes - Buffer.byteLength(keptPrompt));
  return { prompt: keptPrompt, answer: keptAnswer, truncated: true };
}
