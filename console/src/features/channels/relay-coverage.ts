import { findProviderType, ProviderTypeId } from '@turnpike/core/providers/catalogue';

/**
 * What the relay can carry on a channel of each type, so the channel form can warn before an admin lists models
 * the channel will never be asked for. It follows `adapterFor` and each adapter's `supports` in
 * relay/src/adapters/registry.ts (checked against them by relay-coverage.test.ts) and the task relay's channel
 * types (relay/src/tasks): OpenAI-compatible types carry every OpenAI endpoint, Anthropic chat, Gemini chat and
 * embeddings, Midjourney and Suno only their tasks, every other type nothing yet.
 */
export type RelayReach = 'openai' | 'anthropic' | 'gemini' | 'tasks' | 'none';

/** The kind of request a model is asked with, read from its name. */
export type ModelNeed = 'chat' | 'embeddings' | 'images' | 'audio' | 'moderations' | 'rerank' | 'tasks';

/** The relay endpoints (relay/src/adapters/registry.ts `Endpoint`) each need takes; tasks are not adapter calls. */
export const NEED_ENDPOINTS = {
  chat: ['chat'],
  embeddings: ['embeddings'],
  images: ['image-generation'],
  audio: ['speech', 'transcription'],
  moderations: ['moderations'],
  rerank: ['rerank'],
  tasks: [],
} as const satisfies Record<ModelNeed, readonly string[]>;

const TASK_TYPES: ReadonlySet<number> = new Set([
  ProviderTypeId.MidjourneyProxy,
  ProviderTypeId.MidjourneyProxyPlus,
  ProviderTypeId.Suno,
]);

/** What the relay reaches on a channel of this type (the same rule as the relay's `adapterFor`). */
export function relayReachOf(type: number): RelayReach {
  if (type === ProviderTypeId.Anthropic) return 'anthropic';
  if (type === ProviderTypeId.Gemini) return 'gemini';
  if (TASK_TYPES.has(type)) return 'tasks';
  return findProviderType(type)?.modelList === 'openai' ? 'openai' : 'none';
}

/** The needs each reach can serve. */
export const REACH_CARRIES: Record<RelayReach, ReadonlySet<ModelNeed>> = {
  openai: new Set(['chat', 'embeddings', 'images', 'audio', 'moderations', 'rerank']),
  anthropic: new Set(['chat']),
  gemini: new Set(['chat', 'embeddings']),
  tasks: new Set(['tasks']),
  none: new Set(),
};

/** The kind of request a model needs, by its name (the families the catalogue and the price table list). */
export function modelNeedOf(model: string): ModelNeed {
  const name = model.toLowerCase();
  if (/^(mj_|midjourney$|swap_face$|suno_)/.test(name)) return 'tasks';
  if (/embed/.test(name)) return 'embeddings';
  if (/rerank/.test(name)) return 'rerank';
  if (/moderation/.test(name)) return 'moderations';
  if (/^(dall-e|gpt-image)|^imagen/.test(name)) return 'images';
  if (/^(tts-|whisper)|-tts($|-)|transcribe/.test(name)) return 'audio';
  return 'chat';
}

/** Why a channel of this type will not serve some of its models, or null when it serves them all. */
export type CoverageWarning =
  | { readonly kind: 'notRelayed' }
  | { readonly kind: 'tasksOnly'; readonly models: readonly string[] }
  | { readonly kind: 'cannotCarry'; readonly reach: RelayReach; readonly models: readonly string[] };

export function coverageWarning(type: number, models: readonly string[]): CoverageWarning | null {
  const reach = relayReachOf(type);
  if (reach === 'none') return { kind: 'notRelayed' };
  const carries = REACH_CARRIES[reach];
  const unserved = models.filter((m) => !carries.has(modelNeedOf(m)));
  if (unserved.length === 0) return null;
  return reach === 'tasks'
    ? { kind: 'tasksOnly', models: unserved }
    : { kind: 'cannotCarry', reach, models: unserved };
}
