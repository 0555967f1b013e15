/**
 * What an OpenAI answer reports beside its token `usage` that is billed (docs/adr/0042): the service tier it was
 * served at (`service_tier`, https://platform.openai.com/docs/api-reference/chat/object and
 * https://platform.openai.com/docs/api-reference/responses/object: `default`, `flex`, `priority`, `scale`), the web
 * searches it ran and the images it made.
 *
 * - Chat Completions: the search models (`gpt-4o-search-preview`, `gpt-4o-mini-search-preview`, `*-search-api`)
 *   search before every answer, and OpenAI bills one web search call per request
 *   (https://platform.openai.com/docs/guides/tools-web-search, "Chat Completions"); the answer's `model` says
 *   which model served it. A chunk of a stream carries the same fields (the usage chunk included).
 * - Responses: every `web_search_call` item of `output` is a call, every `image_generation_call` item an image.
 */

import { isRecord } from '@turnpike/core/json';
import type { NormalisedUsage } from '../../contract.ts';
import { normaliseOpenAiUsage, serviceTierField } from '../../metering/usage.ts';

/** A Chat Completions model that searches the web on every request. */
const SEARCH_MODEL = /-search-(preview|api)(-|$)/;

/** The billed facts of an answer other than its tokens; absent fields were not reported. */
function chargesOf(answer: Readonly<Record<string, unknown>>): Partial<NormalisedUsage> {
  let searches = 0;
  let images = 0;
  if (Array.isArray(answer.output)) {
    for (const item of answer.output) {
      if (!isRecord(item)) continue;
      if (item.type === 'web_search_call') searches += 1;
      else if (item.type === 'image_generation_call') images += 1;
    }
  } else if (typeof answer.model === 'string' && SEARCH_MODEL.test(answer.model)) searches = 1;
  return {
    ...serviceTierField(answer.service_tier),
    ...(searches > 0 ? { webSearchCalls: searches } : {}),
    ...(images > 0 ? { imageCount: images } : {}),
  };
}

/**
 * The usage of an OpenAI answer (a chat completion, a stream chunk, a Responses `response` object): its `usage`,
 * with the service tier, searches and images it reports. Undefined when it has no `usage`.
 */
export function openAiAnswerUsage(answer: Readonly<Record<string, unknown>>): NormalisedUsage | undefined {
  const usage = normaliseOpenAiUsage(answer.usage);
  return usage === undefined ? undefined : { ...usage, ...chargesOf(answer) };
}
