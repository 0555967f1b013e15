/**
 * The custom resources of `turnpike.dev/v1alpha1` as the operator reads them. The API server has already
 * applied the CRD schema (crds/), defaults included; the desired-state functions still default defensively,
 * because a resource stored under an older schema may lack a field a newer one defaults.
 */
import type { SourceKindValue } from '@turnpike/core/ownership/source';

export const GROUP = 'turnpike.dev';
export const VERSION = 'v1alpha1';
/** Put on every resource the operator reconciles; removed once its rows are gone. */
export const FINALIZER = 'turnpike.dev/finalizer';
/** Only Secrets with this label are watched (and may hold channel keys). */
export const CREDENTIAL_LABEL = 'turnpike.dev/credential';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** `metav1.Condition`. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface CommonStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  /** Config version the rows were published under; relays at or past it serve them. */
  configVersion?: number;
  relays?: { applied: number; total: number; summary: string };
}

export interface ChannelSpec {
  displayName?: string;
  type: string | number;
  baseURL?: string;
  keySecretRef: { name: string; key?: string };
  /** How a call picks one of several keys in the Secret: at random (default) or in turn. */
  keySelection?: 'random' | 'polling';
  models: string[];
  groups?: string[];
  priority?: number;
  weight?: number;
  tag?: string;
  enabled?: boolean;
  autoBan?: boolean;
  testModel?: string;
  other?: string;
  openaiOrganization?: string;
  maxInputTokens?: number;
  /** Requests per minute, tokens per minute and requests in flight on the channel (docs/adr/0028). */
  limits?: { rpm?: number; tpm?: number; concurrency?: number };
  modelMapping?: Record<string, string>;
  statusCodeMapping?: Record<string, string>;
  headers?: Record<string, string>;
  paramOverride?: Record<string, unknown>;
  proxy?: string;
  forceFormat?: boolean;
  thinkingToContent?: boolean;
}

export interface ChannelStatus extends CommonStatus {
  channelIDs?: number[];
  secretResourceVersion?: string;
}

export interface ModelPriceSpec {
  models: string[];
  groups?: string[];
  ratio?: {
    model: string;
    completion?: string;
    cacheRead?: string;
    cacheWrite?: string;
    cacheWrite1h?: string;
  };
  price?: {
    perCall?: string;
    input?: string;
    output?: string;
    cacheRead?: string;
    /** 5-minute cache writes, and every write of a provider that does not say how long it keeps them. */
    cacheWrite?: string;
    /** Anthropic's 1-hour cache writes. */
    cacheWrite1h?: string;
  };
  /**
   * Long-context tiers as multipliers of this resource's prices (LongContextTiers): past `above` prompt tokens the
   * whole call costs input × `input`, output × `output`, cache × `cache` (× `input` when not set). Every group.
   */
  longContext?: { above: number; input: string; output: string; cache?: string }[];
  /** Service tier -> multiplier of the token bill (ServiceTierRatio). Every group. */
  serviceTiers?: Record<string, string>;
  /** USD per web search and per image (RequestFees). Every group. */
  fees?: { webSearch?: string; image?: string };
}

export interface ModelPriceStatus extends CommonStatus {
  optionEntries?: string[];
}

export interface GatewayOptionSpec {
  values: Record<string, string>;
}

export interface GatewayOptionStatus extends CommonStatus {
  optionKeys?: string[];
}

export interface Resource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type ChannelResource = Resource<ChannelSpec, ChannelStatus>;
export type ModelPriceResource = Resource<ModelPriceSpec, ModelPriceStatus>;
export type GatewayOptionResource = Resource<GatewayOptionSpec, GatewayOptionStatus>;
export type AnyResource = Resource<unknown, CommonStatus>;

export interface SecretObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** base64 values. */
  data?: Record<string, string>;
}

/** Which API path a kind lives under. */
export interface KindInfo {
  readonly kind: SourceKindValue;
  readonly plural: string;
}

export const KINDS = {
  Channel: { kind: 'Channel', plural: 'channels' },
  ModelPrice: { kind: 'ModelPrice', plural: 'modelprices' },
  GatewayOption: { kind: 'GatewayOption', plural: 'gatewayoptions' },
} as const satisfies Record<SourceKindValue, KindInfo>;

/** `namespace/name`: the work queue key of a namespaced object. */
export const keyOf = (meta: ObjectMeta): string => `${meta.namespace ?? ''}/${meta.name}`;

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
