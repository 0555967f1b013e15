import { carriedBy, PROVIDER_TYPES, ProviderTypeId } from '@turnpike/core/providers/catalogue';
import { describe, expect, it } from 'vitest';
// The relay is what the warning describes: the table here must say what its providers really serve.
import type { Endpoint } from '../../../../relay/src/formats/format.ts';
import { providerFor } from '../../../../relay/src/providers/registry.ts';
import {
  coverageWarning,
  type ModelNeed,
  modelNeedOf,
  NEED_ENDPOINTS,
  relayReachOf,
} from './relay-coverage.ts';

describe('relay coverage of channel types', () => {
  it('matches the relay: each type reaches the format of the provider the relay picks for it, task types only their tasks', () => {
    const taskTypes = [
      ProviderTypeId.MidjourneyProxy,
      ProviderTypeId.MidjourneyProxyPlus,
      ProviderTypeId.Suno,
      ProviderTypeId.GeminiVeo,
      ProviderTypeId.Kling,
      ProviderTypeId.Jimeng,
      ProviderTypeId.Vidu,
      ProviderTypeId.DoubaoVideo,
      ProviderTypeId.Sora,
    ];
    for (const { value } of PROVIDER_TYPES) {
      const expected =
        providerFor(value)?.format.id ?? ((taskTypes as number[]).includes(value) ? 'tasks' : 'none');
      expect(relayReachOf(value), `type ${value}`).toBe(expected);
    }
  });

  it("declares for each type exactly the needs whose endpoints the relay's provider supports", () => {
    for (const { value } of PROVIDER_TYPES) {
      const provider = providerFor(value);
      if (!provider) continue;
      for (const need of Object.keys(NEED_ENDPOINTS) as ModelNeed[]) {
        if (need === 'tasks') continue;
        const endpoints = NEED_ENDPOINTS[need] as readonly Endpoint[];
        const supported = endpoints.every((e) => provider.supports(e));
        expect(carriedBy(value).includes(need), `type ${value} ${need}`).toBe(supported);
      }
    }
  });

  it('reads what a model needs from its name', () => {
    expect(
      ['gpt-4o', 'claude-3-5-sonnet-20241022', 'gemini-2.0-flash-exp-image-generation'].map(modelNeedOf),
    ).toEqual(['chat', 'chat', 'chat']);
    expect(['text-embedding-3-small', 'text-embedding-004'].map(modelNeedOf)).toEqual([
      'embeddings',
      'embeddings',
    ]);
    expect(['dall-e-3', 'gpt-image-1', 'tts-1', 'whisper-1', 'gpt-4o-mini-tts'].map(modelNeedOf)).toEqual([
      'images',
      'images',
      'audio',
      'audio',
      'audio',
    ]);
    expect(['mj_imagine', 'swap_face', 'suno_music', 'text-moderation-latest'].map(modelNeedOf)).toEqual([
      'tasks',
      'tasks',
      'tasks',
      'moderations',
    ]);
  });

  it('warns only about the models a type cannot serve', () => {
    expect(coverageWarning(1, ['gpt-4o', 'dall-e-3', 'text-embedding-3-small'])).toBeNull();
    expect(coverageWarning(14, ['claude-3-haiku', 'text-embedding-3-small', 'dall-e-3'])).toEqual({
      kind: 'cannotCarry',
      reach: 'anthropic',
      models: ['text-embedding-3-small', 'dall-e-3'],
    });
    expect(coverageWarning(24, ['gemini-1.5-pro', 'text-embedding-004'])).toBeNull();
    expect(coverageWarning(2, ['mj_imagine', 'gpt-4o'])).toEqual({ kind: 'tasksOnly', models: ['gpt-4o'] });
    expect(coverageWarning(36, ['suno_music'])).toBeNull();
    expect(coverageWarning(1, ['mj_imagine'])).toMatchObject({ kind: 'cannotCarry', models: ['mj_imagine'] });
    expect(coverageWarning(11, [])).toEqual({ kind: 'notRelayed' });
    expect(coverageWarning(3, ['gpt-4o', 'text-embedding-ada-002', 'text-moderation-latest'])).toEqual({
      kind: 'cannotCarry',
      reach: 'openai',
      models: ['text-moderation-latest'],
    });
    expect(coverageWarning(41, ['gemini-2.0-flash', 'claude-3-5-sonnet-20241022'])).toBeNull();
  });
});
