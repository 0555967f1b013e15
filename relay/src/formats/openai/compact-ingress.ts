/**
 * `POST /v1/responses/compact` (https://platform.openai.com/docs/api-reference/responses/compact), Codex's context
 * compaction: the history (`input`, `instructions`) in, the compacted history out as a `response.compaction` object
 * whose `output` is the user's messages followed by one item standing for the rest. An OpenAI channel gets the
 * request as it came and answers with its own opaque `compaction` item. Any other channel is asked for a summary in
 * one chat call (tools kept declared, since a history with tool calls needs them, but not callable) and the summary
 * comes back as a user message item after the user's messages: plain text every channel can read later, where
 * OpenAI's encrypted item could only go back to OpenAI. Billed as the chat call it was.
 */

import type { NormalisedUsage } from '../../metering/usage.ts';
import { contentText, isRecord, type Json, randomId } from '../canonical.ts';
import type { Ingress } from '../ingress.ts';
import {
  openAiResponsesIngress,
  refuseResponsesConversion,
  responsesToChatRequest,
  toResponsesUsage,
} from './responses-ingress.ts';

/** What the model is asked for at the end of the history it summarises. */
const SUMMARY_REQUEST = [
  'Your context is about to be compacted: everything above will be replaced by what you write now.',
  'Write a handoff summary for yourself to continue the work: the goal, what has been done and found, the',
  'decisions made and why, files and commands that matter, and what is left to do next. Do not call tools.',
].join(' ');

/** How the summary starts in the compacted history, so the model reading it later knows what it is. */
const COMPACTED_SUMMARY_PREFIX = 'Summary of the conversation so far (compacted by the gateway):\n\n';

/** The compaction request as a chat call that asks for the summary. */
function compactToChatRequest(body: Readonly<Json>, model: string): Json {
  // An OpenAI compaction item is opaque to any other model: it is left out.
  const input = Array.isArray(body.input)
    ? body.input.filter((item) => !(isRecord(item) && item.type === 'compaction'))
    : body.input;
  const chat = responsesToChatRequest({ ...body, input }, model, false);
  const messages = Array.isArray(chat.messages) ? chat.messages : [];
  chat.messages = [...messages, { role: 'user', content: SUMMARY_REQUEST }];
  if (chat.tools !== undefined) chat.tool_choice = 'none';
  delete chat.hosted_tools;
  delete chat.parallel_tool_calls;
  return chat;
}

/** The user's own messages of the history, as compacted output items. */
function userMessages(body: Readonly<Json>): Json[] {
  const text = (content: unknown) => (typeof content === 'string' ? content : contentText(content));
  if (typeof body.input === 'string') return [messageItem(body.input)];
  const items: Json[] = [];
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (!isRecord(item) || item.role !== 'user' || (item.type !== undefined && item.type !== 'message'))
      continue;
    const said = text(item.content);
    if (said !== '' && !said.startsWith(COMPACTED_SUMMARY_PREFIX)) items.push(messageItem(said));
  }
  return items;
}

const messageItem = (text: string): Json => ({
  type: 'message',
  id: `msg_${randomId()}`,
  status: 'completed',
  role: 'user',
  content: [{ type: 'input_text', text }],
});

/** The summary answer as a `response.compaction` object. */
function chatToCompaction(
  answer: Json,
  usage: NormalisedUsage,
  _model: string,
  body: Readonly<Json> = {},
): Json {
  const choice = Array.isArray(answer.choices) && isRecord(answer.choices[0]) ? answer.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const summary = contentText(message.content).trim();
  return {
    id: `resp_${randomId()}`,
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output: [...userMessages(body), messageItem(`${COMPACTED_SUMMARY_PREFIX}${summary}`)],
    usage: toResponsesUsage(usage),
  };
}

export const openAiCompactIngress: Ingress = {
  ...openAiResponsesIngress,
  toChat: (body, model) => compactToChatRequest(body, model),
  refuseConversion: refuseResponsesConversion,
  fromChat: chatToCompaction,
};
