/** GatewayOption: whole options owned by the resource, checked by the registry's rules at write time. */
import { type GatewayOptionResource, KINDS } from '../../api/v1alpha1.ts';
import { type KindHandlers, sourceRefOf } from '../controller.ts';
import { CONFLICT_RETRY_MS, type OptionHandlerDeps } from '../model-price/reconcile.ts';
import { refuse } from '../outcome.ts';
import { desiredOptions } from './desired.ts';

export function gatewayOptionHandlers(deps: OptionHandlerDeps): KindHandlers<GatewayOptionResource> {
  return {
    info: KINDS.GatewayOption,
    conditions: ['Valid', 'Applied'],
    retryRefusedAfterMs: (refusal) => (refusal.reason === 'Conflict' ? CONFLICT_RETRY_MS : undefined),
    async apply(resource) {
      const desired = desiredOptions(resource);
      if (!desired.ok) return desired;
      const source = {
        ...sourceRefOf(KINDS.GatewayOption, resource),
        generation: resource.metadata.generation ?? 1,
      };
      const outcome = await deps.batcher.apply({ source, values: desired.values });
      if (!outcome.ok) return refuse('Applied', outcome.reason, outcome.message);
      const configVersion = outcome.version > 0 ? outcome.version : (resource.status?.configVersion ?? 0);
      return {
        ok: true,
        configVersion,
        relays: await deps.relays(configVersion),
        extra: { optionKeys: desired.values.map((v) => v.key) },
      };
    },
    async cleanup(resource) {
      const source = {
        ...sourceRefOf(KINDS.GatewayOption, resource),
        generation: resource.metadata.generation ?? 1,
      };
      const outcome = await deps.batcher.apply({ source, values: undefined });
      return outcome.ok ? { ok: true } : refuse('Applied', outcome.reason, outcome.message);
    },
  };
}
