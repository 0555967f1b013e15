/**
 * The handlers of a kind whose resource owns option values (ModelPrice: price-map entries; GatewayOption: whole
 * options): what it wants is written with the other owned values in batches (option-batcher.ts), and removed on
 * deletion. The kinds differ only in how the resource becomes values and how the status names them.
 */
import type { ManagedOptionValue } from '@turnpike/core/options/managed-options';
import type { AnyResource, KindInfo } from '../api/v1alpha1.ts';
import { type KindHandlers, sourceRefOf } from './controller.ts';
import type { OptionBatcher } from './option-batcher.ts';
import { type Refusal, refuse } from './outcome.ts';

export interface OptionHandlerDeps {
  readonly batcher: OptionBatcher;
  readonly relays: (version: number) => Promise<{ applied: number; total: number }>;
}

/** Another resource owns the same value: look again now and then, it may be deleted or changed. */
export const CONFLICT_RETRY_MS = 30_000;

export function ownedOptionHandlers<R extends AnyResource>(
  info: KindInfo,
  deps: OptionHandlerDeps,
  desired: (resource: R) => { readonly ok: true; readonly values: ManagedOptionValue[] } | Refusal,
  /** What the status says the resource owns. */
  extra: (values: readonly ManagedOptionValue[]) => Record<string, unknown>,
): KindHandlers<R> {
  const sourceOf = (resource: R) => ({
    ...sourceRefOf(info, resource),
    generation: resource.metadata.generation ?? 1,
  });
  return {
    info,
    conditions: ['Valid', 'Applied'],
    retryRefusedAfterMs: (refusal) => (refusal.reason === 'Conflict' ? CONFLICT_RETRY_MS : undefined),
    async apply(resource) {
      const wanted = desired(resource);
      if (!wanted.ok) return wanted;
      const outcome = await deps.batcher.apply({ source: sourceOf(resource), values: wanted.values });
      if (!outcome.ok) return refuse('Applied', outcome.reason, outcome.message);
      const configVersion = outcome.version > 0 ? outcome.version : (resource.status?.configVersion ?? 0);
      return {
        ok: true,
        configVersion,
        relays: await deps.relays(configVersion),
        extra: extra(wanted.values),
      };
    },
    async cleanup(resource) {
      const outcome = await deps.batcher.apply({ source: sourceOf(resource), values: undefined });
      return outcome.ok ? { ok: true } : refuse('Applied', outcome.reason, outcome.message);
    },
  };
}
