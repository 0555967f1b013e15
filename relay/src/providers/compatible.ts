/**
 * An upstream that speaks OpenAI's format at paths of its own (Zhipu's `/api/paas/v4`, DashScope's
 * `/compatible-mode/v1`, Ark's `/api/v3`, ...), with the key as a bearer token: a provider is its paths per endpoint.
 * An endpoint it has no path for is not carried (the channel is skipped for it).
 */

import type { RelayProviderId } from '@turnpike/core/providers/catalogue';
import type { ChannelView, Endpoint } from '../contract.ts';
import { openAiFormat } from '../formats/openai/format.ts';
import { baseUrlOf, callOf, credentialFailure, type Provider } from './provider.ts';

export interface CompatibleSpec {
  readonly id: RelayProviderId;
  readonly genAiName: string;
  /** The path of each endpoint it serves, under the channel's base URL (the type's default when none). */
  readonly paths: Partial<Record<Endpoint, string>>;
  /** Fills `{other}` in a path (Cloudflare's account id); a message when `other` is missing. */
  readonly needsOther?: string;
}

export function compatibleProvider(spec: CompatibleSpec): Provider {
  const pathOf = (channel: ChannelView, endpoint: Endpoint): string => {
    const path = spec.paths[endpoint] ?? '';
    if (!path.includes('{other}')) return path;
    const other = channel.other.trim();
    if (!other) throw credentialFailure(spec.needsOther ?? 'the channel needs its other field', 400);
    return path.replace('{other}', encodeURIComponent(other));
  };
  return {
    id: spec.id,
    format: openAiFormat,
    genAiName: spec.genAiName,
    supports: (endpoint) => spec.paths[endpoint] !== undefined,
    retriesBadRequest: false,
    buildRequest(channel, input) {
      const written = openAiFormat.writeRequest(channel, input);
      const url = `${baseUrlOf(channel)}${pathOf(channel, input.endpoint)}`;
      return callOf(written, url, { authorization: `Bearer ${channel.key ?? ''}` }, channel);
    },
    readError: (status, body) => openAiFormat.readError(status, body),
  };
}
