import {
  type Carried,
  carriedBy,
  PROVIDER_TYPES,
  relayingOf,
  type TaskCarried,
} from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
import type { Endpoint } from '../contract.ts';
import { providerFor } from './registry.ts';

/** The relay endpoints each kind the catalogue names stands for; tasks are not provider calls (../tasks). */
const CARRIED_ENDPOINTS: Readonly<Record<Exclude<Carried, TaskCarried>, readonly Endpoint[]>> = {
  chat: ['chat'],
  embeddings: ['embeddings'],
  images: ['image-generation'],
  audio: ['speech', 'transcription'],
  moderations: ['moderations'],
  rerank: ['rerank'],
};

// The catalogue declares what each type carries once; the console's type list and its coverage warning read that
// declaration, so the relay's providers must do what it says.
describe("the catalogue's relaying against the relay's providers", () => {
  it('has a provider of the declared format for every type the catalogue says the relay serves', () => {
    for (const { value } of PROVIDER_TYPES) {
      const relay = relayingOf(value);
      const provider = providerFor(value);
      if (relay?.kind === 'relayed') expect(provider?.format.id, `type ${value}`).toBe(relay.format);
      else expect(provider, `type ${value}`).toBeUndefined();
    }
  });

  it('declares for each relayed type exactly the kinds whose endpoints its provider supports', () => {
    for (const { value } of PROVIDER_TYPES) {
      const provider = providerFor(value);
      if (!provider) continue;
      for (const [kind, endpoints] of Object.entries(CARRIED_ENDPOINTS)) {
        const supported = endpoints.every((e) => provider.supports(e));
        expect(carriedBy(value).includes(kind as Carried), `type ${value} ${kind}`).toBe(supported);
      }
    }
  });
});

// Reference §4.7: "HTTP 403 for Gemini channels only" disables a channel; every other provider's 403 is a refusal of
// one request. Type 24 is Google Gemini and type 1 OpenAI in the reference's channel type table.
describe('what a 403 means, by provider', () => {
  it("treats only Gemini's 403 as a revoked key", () => {
    expect(providerFor(24)?.forbiddenMeansRevokedKey).toBe(true);
    const others = PROVIDER_TYPES.filter(({ value }) => value !== 24 && providerFor(value) !== undefined);
    expect(others.length).toBeGreaterThan(10);
    for (const { value } of others)
      expect(providerFor(value)?.forbiddenMeansRevokedKey, `type ${value}`).not.toBe(true);
  });
});
