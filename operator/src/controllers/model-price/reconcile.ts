/** ModelPrice: price map entries owned by the resource, written with the other owned options in batches. */
import { KINDS, type ModelPriceResource } from '../../api/v1alpha1.ts';
import { type KindHandlers, sourceRefOf } from '../controller.ts';
import type { OptionBatcher } from '../option-batcher.ts';
import { refuse } from '../outcome.ts';
import { desiredPrices } from './desired.ts';

export interface OptionHandlerDeps {
  readonly batcher: OptionBatcher;
  readonly relays: (version: number) => Promise<{ applied: number; total: number }>;
}

/** Another resource owns the same value: look again now and then, it may be deleted or changed. */
export const CONFLICT_RETRY_MS = 30_000;

export function modelPriceHandlers(deps: OptionHandlerDeps): KindHandlers<ModelPriceResource> {
  return {
    info: KINDS.ModelPrice,
    conditions: ['Valid', 'Applied'],
    retryRefusedAfterMs: (refusal) => (refusal.reason === 'Conflict' ? CONFLICT_RETRY_MS : undefined),
    async apply(resource) {
      const desired = desiredPrices(resource);
      if (!desired.ok) return desired;
      const source = {
        ...sourceRefOf(KINDS.ModelPrice, resource),
        generation: resource.metadata.generation ?? 1,
      };
      const outcome = await deps.batcher.apply({ source, values: desired.values });
      if (!outcome.ok) return refuse('Applied', outcome.reason, outcome.message);
      const configVersion = outcome.version > 0 ? outcome.version : (resource.status?.configVersion ?? 0);
      return {
        ok: true,
        configVersion,
        relays: await deps.relays(configVersion),
        extra: { optionEntries: desired.values.map((v) => `${v.key}[${v.entry}]`) },
      };
    },
    async cleanup(resource) {
      const source = {
        ...sourceRefOf(KINDS.ModelPrice, resource),
        generation: resource.metadata.generation ?? 1,
      };
      const outcome = await deps.batcher.apply({ source, values: undefined });
      return outcome.ok ? { ok: true } : refuse('Applied', outcome.reason, outcome.message);
    },
  };
}
