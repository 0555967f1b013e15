import { describe, expect, it } from 'vitest';
import { coverageWarning, modelNeedOf } from './relay-coverage.ts';

describe('relay coverage of channel types', () => {
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
      'drawing',
      'drawing',
      'music',
      'moderations',
    ]);
    expect(['sora-2', 'veo-3.1-generate-preview', 'kling-v2-1', 'viduq2'].map(modelNeedOf)).toEqual(
      Array(4).fill('videos'),
    );
  });

  it('warns only about the models a type cannot serve', () => {
    expect(coverageWarning(1, ['gpt-4o', 'dall-e-3', 'text-embedding-3-small'])).toBeNull();
    expect(coverageWarning(14, ['claude-3-haiku', 'text-embedding-3-small', 'dall-e-3'])).toEqual({
      kind: 'cannotCarry',
      carries: ['chat', 'batches'],
      models: ['text-embedding-3-small', 'dall-e-3'],
    });
    expect(coverageWarning(24, ['gemini-1.5-pro', 'text-embedding-004'])).toBeNull();
    expect(coverageWarning(2, ['mj_imagine', 'gpt-4o'])).toEqual({
      kind: 'cannotCarry',
      carries: ['drawing'],
      models: ['gpt-4o'],
    });
    // A video type's own models are what it carries.
    expect(coverageWarning(50, ['kling-v2-1', 'kling-v1-6'])).toBeNull();
    expect(coverageWarning(36, ['suno_music'])).toBeNull();
    expect(coverageWarning(1, ['mj_imagine'])).toMatchObject({ kind: 'cannotCarry', models: ['mj_imagine'] });
    expect(coverageWarning(11, [])).toEqual({ kind: 'notRelayed' });
    expect(coverageWarning(3, ['gpt-4o', 'text-embedding-ada-002', 'text-moderation-latest'])).toEqual({
      kind: 'cannotCarry',
      carries: ['chat', 'embeddings', 'images', 'audio', 'videos', 'batches'],
      models: ['text-moderation-latest'],
    });
    expect(coverageWarning(41, ['gemini-2.0-flash', 'claude-3-5-sonnet-20241022'])).toBeNull();
  });
});
