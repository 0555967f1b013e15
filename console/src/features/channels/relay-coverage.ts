import { type Carried, carriedBy, relayingOf } from '@turnpike/core/providers/catalogue';

/**
 * What the relay can carry on a channel of each type, so the channel form can warn before an admin lists models
 * the channel will never be asked for. It reads the catalogue's one declaration (`relay`: the provider, the
 * format and what the type carries), the same the relay's provider registry and task providers read and are
 * checked against (relay/src/providers/registry.test.ts, relay/src/tasks/carried.test.ts): what a type carries is
 * its provider's, not its wire format's (a Jina channel speaks OpenAI's format and carries embeddings and rerank
 * only), and a type the relay does not serve carries nothing (the console API refuses new channels of it).
 */

/** The kind of request a model needs, by its name (the families the catalogue and the price table list). */
export function modelNeedOf(model: string): Carried {
  const name = model.toLowerCase();
  if (/^(mj_|midjourney$|swap_face$)/.test(name)) return 'drawing';
  if (/^suno_/.test(name)) return 'music';
  if (/^(sora-|veo-|kling-|jimeng_|vidu|doubao-seedance-)/.test(name)) return 'videos';
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
  | {
      readonly kind: 'cannotCarry';
      readonly carries: readonly Carried[];
      readonly models: readonly string[];
    };

export function coverageWarning(type: number, models: readonly string[]): CoverageWarning | null {
  const kind = relayingOf(type)?.kind;
  if (kind !== 'relayed' && kind !== 'tasks') return { kind: 'notRelayed' };
  const carries = carriedBy(type);
  const unserved = models.filter((m) => !carries.includes(modelNeedOf(m)));
  return unserved.length === 0 ? null : { kind: 'cannotCarry', carries, models: unserved };
}
