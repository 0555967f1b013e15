/**
 * Channel type → provider, read from the catalogue's one declaration (core/src/providers/catalogue.ts `relay`).
 * A type the catalogue does not declare as relayed has no provider: its channels are never picked, and the
 * console API and the operator refuse new ones.
 */
import { type RelayProviderId, relayingOf } from '@turnpike/core/providers/catalogue';
import { anthropicProvider } from './anthropic/provider.ts';
import { geminiProvider } from './gemini/provider.ts';
import { openAiProvider } from './openai/provider.ts';
import type { Provider } from './provider.ts';

export const providers: Partial<Record<RelayProviderId, Provider>> = {
  openai: openAiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
};

/** The provider of a channel type, or undefined when the relay cannot talk to it. */
export function providerFor(type: number): Provider | undefined {
  const relay = relayingOf(type);
  if (relay?.kind !== 'relayed') return undefined;
  const provider = providers[relay.provider];
  return provider?.format.id === relay.format ? provider : undefined;
}

export type { Provider };
