import type { Json } from '@turnpike/core/json';

/**
 * Conveniences for OpenAI's reasoning models (https://platform.openai.com/docs/guides/reasoning and
 * https://platform.openai.com/docs/api-reference/chat/create: `reasoning_effort`, `max_completion_tokens`),
 * as the reference applies them to a chat request on its way to an OpenAI-format upstream (reference §5.5):
 *
 * - A model named with a `-high`, `-medium` or `-low` suffix (`o3-mini-high`) is asked for with that
 *   `reasoning_effort` and without the suffix. Routing and billing stay with the name the client sent (the
 *   channel lists, and the price is set for, `o3-mini-high`), as in the reference.
 * - These models refuse `max_tokens`: it is sent as `max_completion_tokens` (unless the client sent that too),
 *   and `temperature`, which they refuse unless it is 1, is left out.
 * - `o1` and `o3` take the first `system` message as `developer`.
 */

const EFFORT_SUFFIX = /-(high|medium|low)$/;

/** The o-series (o1, o3, o4, ...) and gpt-5 reasoning models; gpt-5's chat model is not one. */
export function isReasoningModel(model: string): boolean {
  const name = model.toLowerCase();
  if (/^o\d+(-|$)/.test(name)) return true;
  return name.startsWith('gpt-5') && !name.startsWith('gpt-5-chat');
}

/** Models that read the first system message as `developer` (the reference's list). */
const takesDeveloperRole = (model: string) =>
  model === 'o1' || model === 'o1-2024-12-17' || model.startsWith('o3');

/**
 * Applies the conveniences to a chat request body (changed in place) for `model`, the name the upstream would
 * get; returns the name it gets instead (the suffix removed) — `model` itself when nothing applies.
 */
export function applyReasoningConventions(body: Json, model: string): string {
  let upstreamModel = model;
  const suffix = EFFORT_SUFFIX.exec(model);
  if (suffix && isReasoningModel(model.slice(0, suffix.index))) {
    upstreamModel = model.slice(0, suffix.index);
    body.reasoning_effort = suffix[1];
  }
  if (!isReasoningModel(upstreamModel)) return upstreamModel;
  if (body.max_tokens !== undefined && body.max_tokens !== null) {
    if (body.max_completion_tokens === undefined || body.max_completion_tokens === null)
      body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
  }
  delete body.temperature;
  if (takesDeveloperRole(upstreamModel.toLowerCase()) && Array.isArray(body.messages)) {
    const messages = body.messages as unknown[];
    const first = messages.findIndex(
      (message) => typeof message === 'object' && message !== null && (message as Json).role === 'system',
    );
    if (first >= 0) {
      body.messages = messages.map((message, index) =>
        index === first ? { ...(message as Json), role: 'developer' } : message,
      );
    }
  }
  return upstreamModel;
}

/**
 * The reasoning effort a request asks for, as the consume log records it (`other.reasoning_effort`): the model
 * name's suffix when the conveniences above apply to it, else the client's `reasoning_effort` (chat) or
 * `reasoning.effort` (Responses); undefined when it asks for none.
 */
export function reasoningEffortOf(body: unknown, upstreamModel: string): string | undefined {
  const suffix = EFFORT_SUFFIX.exec(upstreamModel);
  if (suffix && isReasoningModel(upstreamModel.slice(0, suffix.index))) return suffix[1];
  if (typeof body !== 'object' || body === null) return undefined;
  const { reasoning_effort: effort, reasoning } = body as Json;
  if (typeof effort === 'string' && effort !== '') return effort;
  const nested = typeof reasoning === 'object' && reasoning !== null ? (reasoning as Json).effort : undefined;
  return typeof nested === 'string' && nested !== '' ? nested : undefined;
}
