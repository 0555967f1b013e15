/**
 * Sensitive words (reference §9.2; options CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled,
 * CheckSensitiveOnCompletionEnabled, StopOnSensitiveEnabled, SensitiveWords).
 *
 * - Prompt side: the request's text (chat messages, prompts, inputs, image prompts, speech input, rerank query
 *   and documents) is checked before anything is reserved; a hit is a local 400 `sensitive_words_detected`.
 * - Completion side: a non-stream answer's output is checked whole; a stream is checked as it passes, with a
 *   bounded carry: only the last (longest word − 1) characters of each choice are held back between chunks, so a
 *   word split across chunks is still caught and memory does not grow with the answer. Held-back text is sent
 *   with the next chunk (or the choice's last one). With StopOnSensitiveEnabled the answer stops with an error;
 *   otherwise each word is replaced by `**###**`.
 *
 * Known limit: two words that overlap each other across the edge of the carry may leave the tail of the second
 * one unmasked (the first is masked); disjoint words are always caught.
 */
import type { RelayError } from '../contract.ts';
import { localError } from '../errors.ts';
import type { WordMatcher } from '../metering/sensitive.ts';
import type { RelayContext } from './context.ts';

export const SENSITIVE_REPLACEMENT = '**###**';

/** The compiled `SensitiveWords` option. */
export interface SensitiveWords {
  readonly matcher: WordMatcher;
  /** Length of the longest word (UTF-16 units): the carry of a stream is one less. */
  readonly longest: number;
}

export const sensitiveWordsError = (words: readonly string[]): RelayError =>
  localError(
    400,
    'sensitive_words_detected',
    `the request contains sensitive words: ${words.join(', ')}`,
    'invalid_request_error',
  );

/** The completion check in force for this request, or undefined when it is off. */
export interface CompletionCheck {
  readonly words: SensitiveWords;
  /** StopOnSensitiveEnabled: stop with an error instead of masking. */
  readonly stop: boolean;
}

export function completionCheckOf(ctx: RelayContext): CompletionCheck | undefined {
  const { options } = ctx.deps;
  if (!options.get('CheckSensitiveEnabled') || !options.get('CheckSensitiveOnCompletionEnabled'))
    return undefined;
  const words = ctx.sensitiveWords();
  if (words.matcher.size === 0) return undefined;
  return { words, stop: options.get('StopOnSensitiveEnabled') };
}

/** The prompt check: undefined when the texts are clean or the check is off, else the 400 to answer. */
export function checkPrompt(ctx: RelayContext, texts: readonly string[]): RelayError | undefined {
  const { options } = ctx.deps;
  if (!options.get('CheckSensitiveEnabled') || !options.get('CheckSensitiveOnPromptEnabled'))
    return undefined;
  const { matcher } = ctx.sensitiveWords();
  if (matcher.size === 0) return undefined;
  const found = new Set<string>();
  for (const text of texts) for (const word of matcher.findWords(text)) found.add(word);
  if (found.size === 0) return undefined;
  ctx.log.warn({ words: [...found] }, 'sensitive words in a prompt');
  return sensitiveWordsError([...found]);
}

/**
 * The error a stopped answer ends with (after what was produced is billed). The words are logged, not shown:
 * the caller did not write them, and listing them would publish the word list.
 */
export const sensitiveCompletionError = (): RelayError =>
  localError(
    400,
    'sensitive_words_detected',
    'the answer was stopped: it contains sensitive words',
    'invalid_request_error',
  );

export interface FilterStep {
  /** Text that may be sent now (masked in replace mode). */
  readonly text: string;
  /** Words found in this step (stop mode stops on any). */
  readonly found: readonly string[];
}

/** Incremental check of streamed text, one carry per choice index. */
export interface StreamFilter {
  push(index: number, piece: string): FilterStep;
  /** The choice ended: everything held back, checked. */
  flush(index: number): FilterStep;
  /** Choices that still hold text back. */
  pending(): number[];
}

export function createStreamFilter(check: CompletionCheck): StreamFilter {
  const { matcher, longest } = check.words;
  const carry = new Map<number, string>();
  const keep = Math.max(longest - 1, 0);

  const step = (index: number, combined: string, isLast: boolean): FilterStep => {
    const matches = matcher.findAll(combined);
    let safeEnd = isLast ? combined.length : combined.length - keep;
    // A whole word that straddles the cut is sent (masked) now rather than split.
    for (let changed = true; changed; ) {
      changed = false;
      for (const match of matches) {
        if (match.start < safeEnd && match.end > safeEnd) {
          safeEnd = match.end;
          changed = true;
        }
      }
    }
    if (safeEnd <= 0) {
      carry.set(index, combined);
      return { text: '', found: [] };
    }
    const found = [...new Set(matches.filter((m) => m.end <= safeEnd).map((m) => m.word))];
    const ready = combined.slice(0, safeEnd);
    const rest = combined.slice(safeEnd);
    if (rest === '') carry.delete(index);
    else carry.set(index, rest);
    return {
      text: found.length === 0 || check.stop ? ready : matcher.replaceAll(ready, SENSITIVE_REPLACEMENT),
      found,
    };
  };

  return {
    push: (index, piece) => step(index, (carry.get(index) ?? '') + piece, false),
    flush(index) {
      const held = carry.get(index);
      if (held === undefined) return { text: '', found: [] };
      carry.delete(index);
      return step(index, held, true);
    },
    pending: () => [...carry.keys()],
  };
}
