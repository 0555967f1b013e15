/**
 * Codex's context compaction on a channel that is not OpenAI's (docs/adr/0029). OpenAI compacts a history into one
 * opaque `compaction` item (`encrypted_content`), asked for either by `POST /v1/responses/compact` or, in Codex's
 * "remote compaction v2", by a Responses turn whose last input item is `{"type":"compaction_trigger"}`; the client
 * keeps the item and sends it back at the head of its next turns. Elsewhere the relay asks the model for a handoff
 * summary and answers with a `compaction` item of its own: the summary in `encrypted_content`, marked with a prefix
 * so that the relay, and only it, reads it back: as a user message on any channel (OpenAI's included, which could
 * not decrypt it).
 */
import { isRecord, type Json, randomId } from '../canonical.ts';

/** What the model is asked for at the end of the history it summarises. */
export const SUMMARY_REQUEST = [
  'Your context is about to be compacted: everything above will be replaced by what you write now.',
  'Write a handoff summary for yourself to continue the work: the goal, what has been done and found, the',
  'decisions made and why, files and commands that matter, and what is left to do next. Do not call tools.',
].join(' ');

/** How the summary reads in the history it stands for, so the model reading it later knows what it is. */
const SUMMARY_PREFIX = 'Summary of the conversation so far (compacted by the gateway):\n\n';

/** How a `compaction` item's `encrypted_content` holds a summary the relay wrote. */
const COMPACTION_CONTENT_PREFIX = 'turnpike.compaction.v1.';

/** A `compaction` output item holding `summary`. */
export const compactionItem = (summary: string): Json => ({
  type: 'compaction',
  id: `cmp_${randomId()}`,
  encrypted_content: COMPACTION_CONTENT_PREFIX + Buffer.from(summary).toString('base64url'),
});

/**
 * A `compaction` item of the history as the user message it stands for, or undefined when the relay did not
 * write it (OpenAI's own, opaque to anything but OpenAI).
 */
export function summaryMessageOf(item: unknown): Json | undefined {
  if (!isRecord(item) || item.type !== 'compaction') return undefined;
  const content = item.encrypted_content;
  if (typeof content !== 'string' || !content.startsWith(COMPACTION_CONTENT_PREFIX)) return undefined;
  const summary = Buffer.from(content.slice(COMPACTION_CONTENT_PREFIX.length), 'base64url').toString('utf8');
  return { role: 'user', content: `${SUMMARY_PREFIX}${summary}` };
}

/** Whether a Responses request asks for a compaction (its last input item is Codex's `compaction_trigger`). */
export const asksCompaction = (body: Readonly<Json>): boolean =>
  Array.isArray(body.input) && isRecord(body.input.at(-1)) && body.input.at(-1).type === 'compaction_trigger';

/**
 * A Responses `input` for an OpenAI upstream: the relay's compaction items become the user messages they stand
 * for (OpenAI would refuse to decrypt them); anything else is kept as it is.
 */
export function withSummariesForOpenAi(input: unknown): unknown {
  if (!Array.isArray(input) || !input.some((item) => summaryMessageOf(item) !== undefined)) return input;
  return input.map((item) => {
    const message = summaryMessageOf(item);
    return message
      ? { type: 'message', role: 'user', content: [{ type: 'input_text', text: message.content }] }
      : item;
  });
}
