/**
 * Channel resource (+ its key Secret) -> the database row it wants (one multi-key channel when the Secret holds
 * several keys), through the same rules the console API applies (key splitting, JSON field checks, the Vertex AI
 * region rule).
 * Pure: no I/O, no clock.
 */

import {
  checkChannelJsonField,
  checkChannelOther,
  joinCommaList,
  normalizeBaseUrl,
  splitChannelKeys,
} from '@turnpike/core/channels/channel-rules';
import type { DesiredChannel } from '@turnpike/core/channels/channel-writes';
import { MultiKeyMode } from '@turnpike/core/channels/multi-key';
import { ChannelStatus } from '@turnpike/core/domain/closed-sets';
import {
  isKnownProviderType,
  ProviderTypeId,
  refusalOfKey,
  relayingOf,
} from '@turnpike/core/providers/catalogue';
import type { ChannelResource, SecretObject } from '../../api/v1alpha1.ts';
import { type Refusal, refuse } from '../outcome.ts';

/** Provider names a Channel may use: the catalogue's names in lower case, plus a few everyday aliases. */
const PROVIDER_NAMES: ReadonlyMap<string, number> = new Map([
  ...Object.entries(ProviderTypeId).map(([name, value]) => [name.toLowerCase(), value] as const),
  ['claude', ProviderTypeId.Anthropic],
  ['azureopenai', ProviderTypeId.Azure],
  ['vertex', ProviderTypeId.VertexAi],
  ['google', ProviderTypeId.Gemini],
  ['bedrock', ProviderTypeId.AwsClaude],
]);

export const DEFAULT_SECRET_KEY = 'apiKey';

/** The provider type number of `type` (a name or a number), or undefined when the catalogue has none. */
export function resolveProviderType(type: string | number): number | undefined {
  if (typeof type === 'number') return isKnownProviderType(type) ? type : undefined;
  if (/^\d+$/.test(type)) return resolveProviderType(Number(type));
  return PROVIDER_NAMES.get(type.toLowerCase());
}

export type DesiredChannels =
  | { readonly ok: true; readonly rows: DesiredChannel[]; readonly type: number }
  | Refusal;

const jsonOrNull = (value: object | undefined): string | null =>
  value && Object.keys(value).length > 0 ? JSON.stringify(value) : null;

/** The Secret value a Channel names, decoded; a refusal says what is missing. */
export function readChannelKey(
  resource: ChannelResource,
  secret: SecretObject | undefined,
): { ok: true; text: string } | Refusal {
  const ref = resource.spec.keySecretRef;
  const field = ref.key ?? DEFAULT_SECRET_KEY;
  if (!secret)
    return refuse(
      'KeyResolved',
      'SecretNotFound',
      `Secret ${ref.name} was not found (it needs the label turnpike.dev/credential: "true")`,
    );
  const encoded = secret.data?.[field];
  if (encoded === undefined)
    return refuse('KeyResolved', 'SecretKeyMissing', `Secret ${ref.name} has no key ${field}`);
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  if (text.trim() === '')
    return refuse('KeyResolved', 'SecretKeyEmpty', `key ${field} of Secret ${ref.name} is empty`);
  return { ok: true, text };
}

export function desiredChannels(
  resource: ChannelResource,
  secret: SecretObject | undefined,
): DesiredChannels {
  const { spec, metadata } = resource;
  const type = resolveProviderType(spec.type);
  if (type === undefined)
    return refuse('Valid', 'UnknownProvider', `provider type ${String(spec.type)} is not one Turnpike knows`);
  const otherProblem = checkChannelOther(type, spec.other ?? '');
  if (otherProblem) return refuse('Valid', 'InvalidSpec', otherProblem);
  // A type the relay cannot serve is never applied: the channel would be accepted and never carry a request.
  const relay = relayingOf(type);
  if (relay?.kind === 'retired') return refuse('Valid', 'RetiredProvider', relay.reason);
  if (relay?.kind === 'unserved') return refuse('Valid', 'UnservedProvider', relay.reason);

  const setting: Record<string, unknown> = {};
  if (spec.headers && Object.keys(spec.headers).length > 0) setting.headers = spec.headers;
  if (spec.proxy) setting.proxy = spec.proxy;
  if (spec.forceFormat !== undefined) setting.force_format = spec.forceFormat;
  if (spec.thinkingToContent !== undefined) setting.thinking_to_content = spec.thinkingToContent;
  const json = {
    model_mapping: jsonOrNull(spec.modelMapping),
    status_code_mapping: jsonOrNull(spec.statusCodeMapping),
    setting: jsonOrNull(setting),
    param_override: jsonOrNull(spec.paramOverride),
  } as const;
  for (const [field, text] of Object.entries(json)) {
    const problem = text === null ? undefined : checkChannelJsonField(field as keyof typeof json, text);
    if (problem) return refuse('Valid', 'InvalidSpec', problem);
  }
  if ((json.status_code_mapping?.length ?? 0) > 1024)
    return refuse('Valid', 'InvalidSpec', 'statusCodeMapping is too long (1024 characters at most)');

  const models = joinCommaList(spec.models);
  if (models === '') return refuse('Valid', 'InvalidSpec', 'the channel needs at least one model');
  const group = joinCommaList(spec.groups && spec.groups.length > 0 ? spec.groups : ['default']);
  if (group.length > 255) return refuse('Valid', 'InvalidSpec', 'too many groups (255 characters at most)');

  const key = readChannelKey(resource, secret);
  if (!key.ok) return key;
  const keys = splitChannelKeys(type, key.text);
  // A key whose shape cannot work for its type (Spark's WebSocket triple) is refused with what to use instead.
  for (const credential of keys) {
    const refusal = refusalOfKey(type, credential);
    if (refusal) return refuse('KeyResolved', 'UnusableKey', refusal);
  }

  const name = (spec.displayName ?? `${metadata.namespace}/${metadata.name}`).slice(0, 255);
  // Several keys make one multi-key channel (docs/adr/0027); a rotation changes its keys in place.
  const row: DesiredChannel = {
    name,
    type,
    key: keys[0] ?? '',
    ...(keys.length > 1 ? { multiKey: { keys, mode: spec.keySelection ?? MultiKeyMode.Random } } : {}),
    baseUrl: normalizeBaseUrl(spec.baseURL ?? ''),
    other: spec.other ?? '',
    openaiOrganization: spec.openaiOrganization || null,
    testModel: spec.testModel || null,
    models,
    group,
    priority: spec.priority ?? 0,
    weight: spec.weight ?? 0,
    tag: spec.tag || null,
    status: spec.enabled === false ? ChannelStatus.ManuallyDisabled : ChannelStatus.Enabled,
    autoBan: spec.autoBan === false ? 0 : 1,
    maxInputTokens: spec.maxInputTokens ?? 0,
    rpmLimit: spec.limits?.rpm ?? 0,
    tpmLimit: spec.limits?.tpm ?? 0,
    concurrencyLimit: spec.limits?.concurrency ?? 0,
    modelMapping: json.model_mapping,
    statusCodeMapping: json.status_code_mapping,
    setting: json.setting,
    paramOverride: json.param_override,
  };
  const rows = [row];
  return { ok: true, rows, type };
}
