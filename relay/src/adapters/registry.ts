/**
 * Which adapter speaks to a channel type. This slice has the OpenAI-compatible adapter only: it serves every
 * catalogue type whose API is OpenAI's (`modelList: 'openai'` in the catalogue). Native formats (Anthropic,
 * Gemini, Bedrock, Vertex, Azure's URL scheme, ...) get their own adapter in the adapters issue; until then
 * channels of those types are never picked, rather than being sent a body they cannot read.
 */
import { findProviderType } from '@turnpike/core/providers/catalogue';
import type { RelayChannel } from '../state/channel-cache.ts';
import { openAiAdapter } from './openai/api.ts';

export type TextEndpoint = 'chat' | 'embeddings';

export type ProviderId = 'openai';

export interface Adapter {
  readonly id: ProviderId;
  /** The full upstream URL of an endpoint for this channel. */
  url(channel: RelayChannel, endpoint: TextEndpoint): string;
  /** Request headers, the channel's credential included. */
  headers(channel: RelayChannel): Record<string, string>;
}

export const adapters = { openai: openAiAdapter } satisfies Record<ProviderId, Adapter>;

/** The adapter of a channel type, or undefined when the relay cannot talk to it yet. */
export function adapterFor(type: number): Adapter | undefined {
  return findProviderType(type)?.modelList === 'openai' ? adapters.openai : undefined;
}
