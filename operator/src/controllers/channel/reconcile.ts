/** Channel: the Secret's keys + the spec -> one database channel, multi-key for several keys (core's channel writer). */
import type { ChannelWriter } from '@turnpike/core/channels/channel-writes';
import { type ChannelResource, KINDS, type SecretObject } from '../../api/v1alpha1.ts';
import { type KindHandlers, sourceRefOf } from '../controller.ts';
import type { Refusal } from '../outcome.ts';
import type { AppliedOutcome } from '../status.ts';
import { DEFAULT_SECRET_KEY, desiredChannels } from './desired.ts';

export interface ChannelHandlerDeps {
  readonly writer: ChannelWriter;
  /** The cached Secret `namespace/name`, if it exists and carries the credential label. */
  readonly secret: (namespace: string, name: string) => SecretObject | undefined;
  readonly relays: (version: number) => Promise<{ applied: number; total: number }>;
}

export function channelHandlers(deps: ChannelHandlerDeps): KindHandlers<ChannelResource> {
  return {
    info: KINDS.Channel,
    conditions: ['KeyResolved', 'Valid', 'Applied'],
    fingerprint: (resource) =>
      deps.secret(resource.metadata.namespace ?? '', resource.spec.keySecretRef.name)?.metadata
        .resourceVersion ?? '-',
    async apply(resource): Promise<AppliedOutcome | Refusal> {
      const namespace = resource.metadata.namespace ?? '';
      const secret = deps.secret(namespace, resource.spec.keySecretRef.name);
      const desired = desiredChannels(resource, secret);
      if (!desired.ok) return desired;
      const source = {
        ...sourceRefOf(KINDS.Channel, resource),
        generation: resource.metadata.generation ?? 1,
      };
      const result = await deps.writer.applyManaged(source, desired.rows);
      const configVersion = result.changed ? result.version : (resource.status?.configVersion ?? 0);
      return {
        ok: true,
        configVersion,
        relays: await deps.relays(configVersion),
        extra: {
          channelIDs: result.rows.map((r) => r.id),
          // Tells a rotation apart without holding key material: the Secret's own resourceVersion.
          secretResourceVersion: secret?.metadata.resourceVersion ?? '',
        },
      };
    },
    async cleanup(resource) {
      await deps.writer.removeManaged(sourceRefOf(KINDS.Channel, resource));
      return { ok: true };
    },
  };
}

/** `namespace/secretName` of the Secret a Channel reads. */
export const secretKeyOf = (resource: ChannelResource): string =>
  `${resource.metadata.namespace ?? ''}/${resource.spec.keySecretRef.name}`;

export { DEFAULT_SECRET_KEY };
