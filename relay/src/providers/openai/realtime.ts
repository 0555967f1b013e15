/**
 * OpenAI's realtime WebSocket (https://platform.openai.com/docs/guides/realtime-websocket):
 * `wss://<host>/v1/realtime?model=<model>`, the key as a bearer token, `OpenAI-Organization` when the channel has one.
 */
import type { ChannelView } from '../../contract.ts';
import { baseUrlOf } from '../provider.ts';
import { type RealtimeUpstream, webSocketUrlOf } from './realtime-address.ts';

export function openAiRealtime(channel: ChannelView, model: string): RealtimeUpstream {
  const headers: Record<string, string> = {
    ...channel.headers,
    authorization: `Bearer ${channel.key ?? ''}`,
  };
  if (channel.organization) headers['openai-organization'] = channel.organization;
  const base = baseUrlOf(channel, 'https://api.openai.com');
  return { url: webSocketUrlOf(`${base}/v1/realtime?model=${encodeURIComponent(model)}`), headers };
}
