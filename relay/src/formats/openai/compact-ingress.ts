/**
 * `POST /v1/responses/compact` (https://platform.openai.com/docs/api-reference/responses/compact), Codex's context
 * compaction: the history (`input`, `instructions`) in, the compacted history out as a `response.compaction` object
 * whose `output` is the user's messages followed by one `compaction` item standing for the rest. An OpenAI channel
 * gets the request as it came and answers with its own opaque item. Any other channel is asked for a summary in
 * one chat call (tools kept declared, since a history with tool calls needs them, but not callable) and the
 * summary comes back in the relay's own `compaction` item (compaction.ts), which every channel reads back later as
 * the summary it holds. Billed as the chat call it was.
 */

import type { Ingress, NormalisedUsage } from '../../contract.ts';
import { contentText, isRecord, type Json, randomId } from '../canonical.ts';
import { compactionItem, SUMMARY_REQUEST } from './compaction.ts';
import {
  openAiResponsesIngress,
  refuseResponsesConversion,
  responsesToChatRequest,
  toResponsesUsage,
} from './responses-ingress.ts';

/** The compaction request as a chat call that asks for the summary. */
function compactToChatRequest(body: Readonly<Json>, model: string): Json {
  const chat = responsesToChatRequest(body, model, false);
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
    if (said !== '') items.push(messageItem(said));
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
    output: [...userMessages(body), compactionItem(summary)],
    usage: toResponsesUsage(usage),
  };
}

export const openAiCompactIngress: Ingress = {
  ...openAiResponsesIngress,
  toChat: (body, model) => compactToChatRequest(body, model),
  refuseConversion: refuseResponsesConversion,
  fromChat: chatToCompaction,
};
