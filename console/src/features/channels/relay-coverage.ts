import { type Carried, carriedBy, relayingOf, type UpstreamFormat } from '@turnpike/core/providers/catalogue';

/**
 * What the relay can carry on a channel of each type, so the channel form can warn before an admin lists models
 * the channel will never be asked for. It reads the catalogue's one declaration (`relay`: the provider, the
 * format and what the type carries), the same the relay's provider registry reads and checks its providers against
 * (relay/src/providers/registry.test.ts): Midjourney and Suno carry only their tasks, and a type the relay does not
 * serve carries nothing (the console API refuses new channels of it).
 */
export type RelayReach = UpstreamFormat | 'tasks' | 'none';

/** What the relay reaches on a channel of this type: the format of its provider, its tasks, or nothing. */
function relayReachOf(type: number): RelayReach {
  const relay = relayingOf(type);
  if (relay?.kind === 'relayed') return relay.format;
  return relay?.kind === 'tasks' ? 'tasks' : 'none';
}

/** The kind of request a model needs, by its name (the families the catalogue and the price table list). */
export function modelNeedOf(model: string): Carried {
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
  const carries: ReadonlySet<Carried> = new Set(carriedBy(type));
  const unserved = models.filter((m) => !carries.has(modelNeedOf(m)));
  if (unserved.length === 0) return null;
  return reach === 'tasks'
    ? { kind: 'tasksOnly', models: unserved }
    : { kind: 'cannotCarry', reach, models: unserved };
}
