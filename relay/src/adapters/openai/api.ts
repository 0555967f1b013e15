/**
 * OpenAI-compatible upstreams: https://platform.openai.com/docs/api-reference/chat and /embeddings.
 * URL `<base>/v1/<endpoint>` (the type's default base when the channel names none), `Authorization: Bearer`.
 */
import { findProviderType } from '@turnpike/core/providers/catalogue';
import type { RelayChannel } from '../../state/channel-cache.ts';
import type { Adapter, TextEndpoint } from '../registry.ts';

const PATHS: Record<TextEndpoint, string> = {
  chat: '/v1/chat/completions',
  embeddings: '/v1/embeddings',
};

export const openAiAdapter: Adapter = {
  id: 'openai',
  url(channel: RelayChannel, endpoint: TextEndpoint): string {
    const base =
      channel.baseUrl || findProviderType(channel.type)?.defaultBaseUrl || 'https://api.openai.com';
    return `${base.replace(/\/+$/, '')}${PATHS[endpoint]}`;
  },
  headers(channel: RelayChannel): Record<string, string> {
    const headers: Record<string, string> = {
      ...channel.headers,
      'content-type': 'application/json',
      authorization: `Bearer ${channel.key ?? ''}`,
    };
    if (channel.organization) headers['openai-organization'] = channel.organization;
    return headers;
  },
};
