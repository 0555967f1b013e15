/**
 * The custom resources of `turnpike.dev/v1alpha1`, declared once (docs/adr/0048): the zod schemas below are the
 * source of the CRD YAML in crds/ and in the turnpike-crds chart (`npm run gen:crds` writes both;
 * operator/src/crd/generated.test.ts fails when they drift) and of the TypeScript types the operator reads.
 * Kubernetes words a zod schema has no name for (`format`, `maxProperties`, `x-kubernetes-*`, CEL rules) ride in
 * `.meta()`. The API server has already applied the CRD schema, defaults included; the desired-state functions
 * still default defensively, because a resource stored under an older schema may lack a field a newer one
 * defaults, so the spec types are the schemas' input types (a defaulted field is optional).
 */
import type { SourceKindValue } from '@turnpike/core/ownership/source';
import { z } from 'zod';
import type { ResourceDeclaration } from '../crd/render.ts';

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

const int32 = () => z.int().meta({ format: 'int32' });
const int64 = () => z.int().meta({ format: 'int64' });
/** A CEL rule and the message the API server answers when it fails. */
const cel = (...rules: [rule: string, message: string][]) => ({
  'x-kubernetes-validations': rules.map(([rule, message]) => ({ rule, message })),
});
const set = { 'x-kubernetes-list-type': 'set' };
/** A name in a list: models, groups. */
const name = (max: number) => z.string().min(1).max(max);
/** A non-negative decimal as text (prices and ratios are never floats). */
const decimal = (description?: string) => {
  const text = z
    .string()
    .max(24)
    .regex(/^(0|[1-9][0-9]{0,9})(\.[0-9]{1,12})?$/);
  return description === undefined ? text : text.describe(description);
};
/** A long-context multiplier: a decimal above 0. */
const multiplier = (description: string) =>
  decimal(description).meta(cel(["self.matches('[1-9]')", 'a long-context multiplier must be more than 0']));
const stringMap = (maxProperties: number, maxLength: number) =>
  z.record(z.string(), z.string().max(maxLength)).meta({ maxProperties });

/** `metav1.Condition`. */
const conditionSchema = z.object({
  type: z.string().max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().max(1024),
  message: z.string().max(32768).optional(),
  lastTransitionTime: z.string().meta({ format: 'date-time' }),
  observedGeneration: int64().optional(),
});
export type Condition = z.infer<typeof conditionSchema>;

/** The status every kind shares; each adds its own fields. */
const commonStatusShape = {
  observedGeneration: int64().optional(),
  /** Config version the rows were published under; relays at or past it serve them. */
  configVersion: int64().optional(),
  relays: z.object({ applied: z.int(), total: z.int(), summary: z.string() }).partial().optional(),
  conditions: z
    .array(conditionSchema)
    .max(16)
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
    .optional(),
};
const commonStatusSchema = z.object(commonStatusShape);
export type CommonStatus = z.infer<typeof commonStatusSchema>;

const channelSpecSchema = z
  .object({
    displayName: z
      .string()
      .max(200)
      .describe('Name shown in the console; default <namespace>/<name>.')
      .optional(),
    type: z
      .union([z.int(), z.string()])
      .meta({
        'x-kubernetes-int-or-string': true,
        ...cel([
          "type(self) == int ? self > 0 : self.matches('^[a-z][a-z0-9]{1,31}$')",
          'type is a lower-case provider name such as openai, or a provider number above 0',
        ]),
      })
      .describe(
        'Provider type by name (openai, anthropic, azure, gemini, vertexai, ...) or its catalogue number.',
      ),
    baseURL: z
      .string()
      .max(2048)
      .meta(
        cel([
          "self == '' || self.startsWith('https://') || self.startsWith('http://')",
          'baseURL must be an http(s) URL',
        ]),
      )
      .describe("Upstream base URL; empty takes the provider's default.")
      .optional(),
    keySecretRef: z
      .object({ name: name(253), key: name(253).default('apiKey') })
      .describe(
        'Secret in the same namespace holding the API key; several keys (one per line, or a JSON array of Vertex AI service accounts) make one multi-key channel, each key with its own state.',
      ),
    keySelection: z
      .enum(['random', 'polling'])
      .default('random')
      .describe('How a call picks one of several keys, at random or in turn (round-robin).'),
    models: z.array(name(255)).min(1).max(500).meta(set),
    groups: z
      .array(name(64).regex(/^[^,\s]+$/))
      .max(64)
      .meta(set)
      .default(['default']),
    priority: int64().default(0),
    weight: int32().min(0).max(100000).default(0),
    tag: z.string().max(255).optional(),
    enabled: z.boolean().default(true),
    autoBan: z
      .boolean()
      .default(true)
      .describe('Let the gateway disable the channel automatically on fatal upstream errors.'),
    testModel: z.string().max(255).optional(),
    other: z
      .string()
      .max(4096)
      .describe('Type-specific extra (Azure API version, Vertex AI region, ...).')
      .optional(),
    openaiOrganization: z.string().max(255).optional(),
    maxInputTokens: int32().min(0).default(0),
    limits: z
      .object({
        rpm: int32().min(0).max(2147483647).describe('Requests per minute.').optional(),
        tpm: int32()
          .min(0)
          .max(2147483647)
          .describe('Tokens per minute (the estimate at admission, corrected with the real usage).')
          .optional(),
        concurrency: int32().min(0).max(2147483647).describe('Requests in flight at once.').optional(),
      })
      .describe(
        'Limits of this channel across every relay (docs/adr/0028); 0 or absent is no limit. A channel at its limit is passed over for another; the caller gets a 429 when none has room.',
      )
      .optional(),
    modelMapping: stringMap(200, 255).optional(),
    statusCodeMapping: stringMap(50, 3).optional(),
    headers: stringMap(50, 4096).describe('Extra request headers sent upstream.').optional(),
    paramOverride: z
      .record(z.string(), z.unknown())
      .meta({ 'x-kubernetes-preserve-unknown-fields': true })
      .describe('Request fields overridden on every call (JSON object).')
      .optional(),
    proxy: z
      .string()
      .max(2048)
      .meta(
        cel([
          "self == '' || self.startsWith('http://') || self.startsWith('https://') || self.startsWith('socks5://')",
          'proxy must be an http, https or socks5 URL',
        ]),
      )
      .optional(),
    forceFormat: z.boolean().optional(),
    thinkingToContent: z.boolean().optional(),
  })
  .meta(
    cel(
      [
        "!has(self.statusCodeMapping) || self.statusCodeMapping.all(k, k.matches('^[1-5][0-9][0-9]$') && self.statusCodeMapping[k].matches('^[1-5][0-9][0-9]$'))",
        'statusCodeMapping must map HTTP status codes (100-599) to HTTP status codes',
      ],
      [
        '!has(self.modelMapping) || self.modelMapping.all(k, size(self.modelMapping[k]) > 0)',
        'modelMapping must map model names to non-empty model names',
      ],
    ),
  );
export type ChannelSpec = z.input<typeof channelSpecSchema>;

const channelStatusSchema = z.object({
  ...commonStatusShape,
  channelIDs: z.array(int64()).max(1000).optional(),
  secretResourceVersion: z.string().optional(),
});
export type ChannelStatus = z.infer<typeof channelStatusSchema>;

const ratioSchema = z
  .object({
    model: decimal('input price ratio'),
    completion: decimal('output price / input price').optional(),
    cacheRead: decimal('cached input price / input price').optional(),
    cacheWrite: decimal(
      'cache write price / input price (a 5-minute write where the provider tells)',
    ).optional(),
    cacheWrite1h: decimal('1-hour cache write price / input price (Anthropic; 2 when not set)').optional(),
  })
  .describe('Ratio mode; model ratio 1 is USD 2 per million input tokens.');

const priceSchema = z
  .object({
    perCall: decimal('USD per call').optional(),
    input: decimal('USD per million input tokens').optional(),
    output: decimal('USD per million output tokens').optional(),
    cacheRead: decimal('USD per million cached input tokens').optional(),
    /** 5-minute cache writes, and every write of a provider that does not say how long it keeps them. */
    cacheWrite: decimal(
      'USD per million cache-write tokens (5-minute writes where the provider tells)',
    ).optional(),
    /** Anthropic's 1-hour cache writes. */
    cacheWrite1h: decimal('USD per million tokens written to a 1-hour cache (Anthropic)').optional(),
  })
  .meta(
    cel(
      [
        'has(self.perCall) ? !has(self.input) && !has(self.output) && !has(self.cacheRead) && !has(self.cacheWrite) && !has(self.cacheWrite1h) : has(self.input)',
        'a per-call price stands alone; per-token prices need at least input',
      ],
      ['!has(self.output) || has(self.input)', 'an output price needs an input price'],
    ),
  )
  .describe('Price mode; a per-call price in USD, or USD per million tokens.');

const longContextTierSchema = z.object({
  above: z.int().min(1).max(100000000).describe('prompt tokens the tier starts after'),
  input: multiplier('input price of the tier / the base input price'),
  output: multiplier('output price of the tier / the base output price'),
  cache: multiplier(
    "cache read and write prices of the tier / the base ones (input's when not set)",
  ).optional(),
});

const modelPriceSpecSchema = z
  .object({
    models: z.array(name(255)).min(1).max(100).meta(set),
    groups: z
      .array(name(64).regex(/^[^/]+$/))
      .max(64)
      .meta(set)
      .describe(
        'Groups this price applies to (users and tokens of those groups pay it; GroupRatio does not multiply it); the other groups pay the price without groups. Empty means every group.',
      )
      .optional(),
    ratio: ratioSchema.optional(),
    price: priceSchema.optional(),
    /**
     * Long-context tiers as multipliers of this resource's prices (LongContextTiers): past `above` prompt tokens
     * the whole call costs input × `input`, output × `output`, cache × `cache` (× `input` when not set). Every group.
     */
    longContext: z
      .array(longContextTierSchema)
      .max(8)
      .meta(
        cel([
          'self.all(t, self.exists_one(u, u.above == t.above))',
          'two long-context tiers start at the same number of tokens',
        ]),
      )
      .describe(
        'Long-context tiers: when a call\'s prompt (cache reads and writes included) is more than `above` tokens, the whole call is billed at this resource\'s prices multiplied: input by `input`, output by `output`, cache reads and writes by `cache` (input\'s multiplier when not set). Multipliers are the provider\'s tier price / its base price: Claude Sonnet 4.5 above 200000 tokens is input "2" ($6 / $3) and output "1.5" ($22.50 / $15). Written to LongContextTiers.',
      )
      .optional(),
    /** Service tier -> multiplier of the token bill (ServiceTierRatio). Every group. */
    serviceTiers: z
      .record(z.string(), decimal())
      .meta({
        maxProperties: 8,
        ...cel([
          "self.all(k, k.matches('^[a-z0-9_-]{1,32}$'))",
          'a service tier is lower-case letters, digits, "-" or "_", such as priority or flex',
        ]),
      })
      .describe(
        'Service tier (as the answer reports it: OpenAI\'s priority, flex) -> multiplier of the whole token bill; a tier not listed costs the standard price. GPT-5 priority is "2" ($2.50 / $1.25 input), flex "0.5". Written to ServiceTierRatio.',
      )
      .optional(),
    /** USD per web search and per image (RequestFees). Every group. */
    fees: z
      .object({
        webSearch: decimal('USD per web search (Anthropic\'s $10 per 1,000 searches is "0.01")').optional(),
        image: decimal('USD per image the model produces').optional(),
      })
      .meta({ minProperties: 1 })
      .describe(
        'USD per request unit, added to the token (or per-call) bill and multiplied by the group ratio like it. Written to RequestFees.',
      )
      .optional(),
  })
  .meta(
    cel(
      ['has(self.ratio) != has(self.price)', 'set exactly one of ratio (ratio mode) or price (price mode)'],
      [
        '!has(self.groups) || size(self.groups) == 0 || !(has(self.longContext) || has(self.serviceTiers) || has(self.fees))',
        'longContext, serviceTiers and fees apply to every group; set them on a ModelPrice without groups',
      ],
      [
        '!has(self.price) || !has(self.price.perCall) || !(has(self.longContext) || has(self.serviceTiers))',
        'a per-call price has no tokens; longContext and serviceTiers need per-token prices',
      ],
    ),
  );
export type ModelPriceSpec = z.input<typeof modelPriceSpecSchema>;

const modelPriceStatusSchema = z.object({
  ...commonStatusShape,
  optionEntries: z
    .array(z.string())
    .max(500)
    .describe(
      'The option entries this resource owns, as OptionKey[model] (OptionKey[group/model] in a group map, LongContextTiers[model/200000/input], ServiceTierRatio[model/priority], RequestFees[model/web_search]).',
    )
    .optional(),
});
export type ModelPriceStatus = z.infer<typeof modelPriceStatusSchema>;

const gatewayOptionSpecSchema = z.object({
  values: z
    .record(z.string(), z.string().max(262144))
    .meta({
      minProperties: 1,
      maxProperties: 100,
      ...cel(
        [
          "self.all(k, !(k in ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice']))",
          'model prices are set with ModelPrice resources, not GatewayOption',
        ],
        [
          "self.all(k, k.matches('^[A-Za-z][A-Za-z0-9_.]{0,127}$'))",
          'option keys are names such as SystemName or oidc.enabled',
        ],
      ),
    })
    .describe('Option key to its value as text (JSON options as JSON text).'),
});
export type GatewayOptionSpec = z.input<typeof gatewayOptionSpecSchema>;

const gatewayOptionStatusSchema = z.object({
  ...commonStatusShape,
  optionKeys: z.array(z.string()).max(100).optional(),
});
export type GatewayOptionStatus = z.infer<typeof gatewayOptionStatusSchema>;

const common = {
  group: GROUP,
  version: VERSION,
  categories: ['turnpike'],
  labels: { 'app.kubernetes.io/part-of': 'turnpike' },
} as const;

/** `kubectl get` columns every kind ends with. */
const readyColumns = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
  { name: 'Relays', type: 'string', jsonPath: '.status.relays.summary' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

/** Every custom resource of the group, as the CRD generator reads it. */
export const RESOURCES: readonly ResourceDeclaration[] = [
  {
    ...common,
    kind: 'Channel',
    plural: 'channels',
    shortNames: ['tpch'],
    description:
      'An upstream provider account the gateway routes model calls to. One database channel per key.',
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
      { name: 'Weight', type: 'integer', jsonPath: '.spec.weight' },
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ...readyColumns,
    ],
    spec: channelSpecSchema,
    status: channelStatusSchema,
  },
  {
    ...common,
    kind: 'ModelPrice',
    plural: 'modelprices',
    shortNames: ['tpmp'],
    description:
      'The price of one or more models, as ratios or as USD prices (decimal strings, never floats).',
    printerColumns: [{ name: 'Models', type: 'string', jsonPath: '.spec.models' }, ...readyColumns],
    spec: modelPriceSpecSchema,
    status: modelPriceStatusSchema,
  },
  {
    ...common,
    kind: 'GatewayOption',
    plural: 'gatewayoptions',
    shortNames: ['tpopt'],
    description:
      'Gateway option keys and values, checked by the same registry and rules as PUT /api/option/.',
    printerColumns: [{ name: 'Keys', type: 'string', jsonPath: '.status.optionKeys' }, ...readyColumns],
    spec: gatewayOptionSpecSchema,
    status: gatewayOptionStatusSchema,
  },
];

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
