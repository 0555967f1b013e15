/**
 * Azure OpenAI's realtime WebSocket (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/realtime-audio-reference):
 * `wss://<resource>/openai/realtime?api-version=<version>&deployment=<deployment>`, the key in `api-key`. The
 * channel's `other` names the version when it is a realtime one (a preview version, `…-preview`); the data-plane
 * GA version the other endpoints default to has no realtime, so {@link AZURE_REALTIME_API_VERSION} stands in.
 */
import type { ChannelView } from '../../contract.ts';
import { type RealtimeUpstream, webSocketUrlOf } from '../openai/realtime-address.ts';
import { baseUrlOf } from '../provider.ts';
import { deploymentOf } from './provider.ts';

export const AZURE_REALTIME_API_VERSION = '2025-04-01-preview';

export function azureRealtime(channel: ChannelView, model: string): RealtimeUpstream {
  const configured = channel.other.trim();
  const version = configured.endsWith('-preview') ? configured : AZURE_REALTIME_API_VERSION;
  const query = `api-version=${encodeURIComponent(version)}&deployment=${encodeURIComponent(deploymentOf(model))}`;
  return {
    url: webSocketUrlOf(`${baseUrlOf(channel)}/openai/realtime?${query}`),
    headers: { ...channel.headers, 'api-key': channel.key ?? '' },
  };
}
