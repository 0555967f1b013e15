/**
 * The provider-type catalogue: every channel type the console offers (spec 02 section 3), with what the console
 * and the API need to know about it. The numeric values are stored in `channels.type` and must never change.
 */

/** How a balance is read, or undefined when the provider publishes no balance endpoint. */
export type BalanceKind = 'openai-billing' | 'siliconflow' | 'deepseek';

/** How the upstream model list is read, or undefined when the provider has none we can call. */
export type ModelListKind =
  | 'openai'
  | 'gemini'
  | 'anthropic'
  | 'azure'
  | 'cohere'
  | 'dashscope'
  | 'cloudflare';

/** The wire formats the relay speaks, on either side: relay/src/formats/<wire>/. */
export const WIRE_FORMATS = ['openai', 'anthropic', 'gemini'] as const;
export type WireFormat = (typeof WIRE_FORMATS)[number];

/**
 * The formats the relay writes to an upstream: the client formats, and those only an upstream speaks (Bedrock's
 * Converse, Dify's chat messages, Cohere's v2 chat), always reached through the canonical chat shape.
 */
export const UPSTREAM_FORMATS = [
  ...WIRE_FORMATS,
  'bedrock-converse',
  'dify',
  'cohere',
  'wenxin',
  'vertex-embeddings',
  'bedrock-embeddings',
] as const;
export type UpstreamFormat = (typeof UPSTREAM_FORMATS)[number];

/** The upstream providers the relay has: relay/src/providers/<id>/, each over one of the formats. */
export const RELAY_PROVIDERS = [
  'openai',
  'anthropic',
  'gemini',
  'azure',
  'bedrock',
  'vertex',
  'zhipu',
  'dashscope',
  'ark',
  'qianfan',
  'cloudflare',
  'minimax',
  'hunyuan',
  'jina',
  'm3e',
  'zhipu-legacy',
  'fastgpt',
  'dify',
  'cohere',
  'baidu',
  'spark',
  'aiproxy',
] as const;
export type RelayProviderId = (typeof RELAY_PROVIDERS)[number];

/**
 * The asynchronous tasks a channel can carry: Midjourney drawings, Suno music, videos (relay/src/tasks), and batches
 * through the provider's own Batch API (relay/src/batches).
 */
export const TASK_CARRIED = ['drawing', 'music', 'videos', 'batches'] as const;
export type TaskCarried = (typeof TASK_CARRIED)[number];

/** The kinds of request a channel can carry, as the console's type list names them. */
export type Carried = 'chat' | 'embeddings' | 'images' | 'audio' | 'moderations' | 'rerank' | TaskCarried;

/**
 * How the relay serves a channel type: the one declaration the relay's provider registry, the console's "what
 * this type carries" and the operator's readiness read. `unserved` and `retired` types are refused for new
 * channels (console API and operator), with the reason.
 */
export type Relaying =
  | {
      readonly kind: 'relayed';
      readonly provider: RelayProviderId;
      readonly format: UpstreamFormat;
      readonly carries: readonly Carried[];
    }
  | { readonly kind: 'tasks'; readonly carries: readonly Carried[] }
  | { readonly kind: 'unserved'; readonly reason: string }
  | { readonly kind: 'retired'; readonly reason: string; readonly replacedBy: number };

export interface ProviderType {
  readonly value: number;
  readonly label: string;
  readonly defaultBaseUrl: string;
  readonly defaultModels: readonly string[];
  /** A hint shown under the key field. */
  readonly keyFormat: string;
  /** What the `other` field means for this type, when it means anything. */
  readonly extraFields: readonly {
    readonly field: 'other' | 'openai_organization';
    readonly label: string;
  }[];
  readonly balance?: BalanceKind;
  readonly modelList?: ModelListKind;
  /** The whole key field is one credential (a JSON document), so a multi-line key is not split. */
  readonly keyIsDocument?: boolean;
  /** How the relay serves it (the provider and the format), or why it does not. */
  readonly relay: Relaying;
}

/** Named values for the types code refers to; everything else is looked up through the catalogue. */
export const ProviderTypeId = {
  OpenAI: 1,
  MidjourneyProxy: 2,
  Azure: 3,
  Ollama: 4,
  MidjourneyProxyPlus: 5,
  Custom: 8,
  PaLM2: 11,
  Anthropic: 14,
  Baidu: 15,
  Zhipu: 16,
  Ali: 17,
  Xunfei: 18,
  Ai360: 19,
  OpenRouter: 20,
  AiProxyLibrary: 21,
  FastGpt: 22,
  Tencent: 23,
  Gemini: 24,
  Moonshot: 25,
  ZhipuV4: 26,
  Lingyi: 31,
  AwsClaude: 33,
  Cohere: 34,
  MiniMax: 35,
  Suno: 36,
  Dify: 37,
  Jina: 38,
  Cloudflare: 39,
  SiliconFlow: 40,
  VertexAi: 41,
  Mistral: 42,
  DeepSeek: 43,
  MokaAi: 44,
  VolcEngine: 45,
  BaiduV2: 46,
  Xinference: 47,
  Xai: 48,
  /** Google's Veo on the Gemini API: video tasks only (relay/src/tasks/video/veo.ts). */
  GeminiVeo: 60,
  /** Kling's video API: video tasks only (relay/src/tasks/video/kling.ts); the reference's number. */
  Kling: 50,
  /** Jimeng on Volcengine's visual API (`AK|SK`, signed calls): video tasks only (relay/src/tasks/video/jimeng.ts). */
  Jimeng: 51,
  /** Vidu's enterprise API: video tasks only (relay/src/tasks/video/vidu.ts). */
  Vidu: 52,
  /** Doubao Seedance on Volcano Ark's content generation tasks: video only (relay/src/tasks/video/seedance.ts). */
  DoubaoVideo: 54,
  /** Sora through OpenAI's video API only: an OpenAI channel for `/v1/videos` and nothing else. */
  Sora: 55,
} as const;

const bearer = 'one API key per line';

const OPENAI_CARRIES: readonly Carried[] = ['chat', 'embeddings', 'images', 'audio', 'moderations', 'rerank'];
const relayed = (
  provider: RelayProviderId,
  format: UpstreamFormat,
  carries: readonly Carried[],
): Relaying => ({
  kind: 'relayed',
  provider,
  format,
  carries,
});
/** An OpenAI-compatible upstream: OpenAI's paths under its base URL, a bearer key. */
const compatible = relayed('openai', 'openai', OPENAI_CARRIES);
const drawingTasks: Relaying = { kind: 'tasks', carries: ['drawing'] };
const musicTasks: Relaying = { kind: 'tasks', carries: ['music'] };
const videoTasks: Relaying = { kind: 'tasks', carries: ['videos'] };

const openaiLike = { keyFormat: bearer, extraFields: [], modelList: 'openai' as const, relay: compatible };

const list: ProviderType[] = [
  {
    value: 1,
    label: 'OpenAI',
    defaultBaseUrl: 'https://api.openai.com',
    defaultModels: [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4-turbo',
      'gpt-3.5-turbo',
      'o1',
      'o1-mini',
      'o3-mini',
      'text-embedding-3-small',
      'text-embedding-3-large',
      'dall-e-3',
      'whisper-1',
      'tts-1',
    ],
    keyFormat: bearer,
    extraFields: [{ field: 'openai_organization', label: 'OpenAI organization (optional)' }],
    balance: 'openai-billing',
    modelList: 'openai',
    // OpenAI's video API too (relay/src/tasks/video).
    relay: relayed('openai', 'openai', [...OPENAI_CARRIES, 'videos', 'batches']),
  },
  {
    value: 2,
    label: 'Midjourney Proxy',
    defaultBaseUrl: 'https://oa.api2d.net',
    // The classic proxy: imagine, change (upscale, variation, reroll), describe, blend.
    defaultModels: [
      'midjourney',
      'mj_imagine',
      'mj_variation',
      'mj_upscale',
      'mj_reroll',
      'mj_blend',
      'mj_describe',
    ],
    keyFormat: 'the mj-api-secret of the proxy',
    extraFields: [],
    relay: drawingTasks,
  },
  {
    value: 5,
    label: 'Midjourney Proxy Plus',
    defaultBaseUrl: 'https://api.openai-sb.com',
    defaultModels: [
      'midjourney',
      'mj_imagine',
      'mj_variation',
      'mj_upscale',
      'mj_blend',
      'mj_reroll',
      'mj_describe',
      'mj_modal',
      'mj_shorten',
      'swap_face',
      'mj_upload',
      'mj_video',
      'mj_edits',
    ],
    keyFormat: 'the mj-api-secret of the proxy',
    extraFields: [],
    relay: drawingTasks,
  },
  {
    value: 36,
    label: 'Suno API',
    defaultBaseUrl: '',
    defaultModels: ['suno_music', 'suno_lyrics'],
    keyFormat: bearer,
    extraFields: [],
    relay: musicTasks,
  },
  {
    value: 4,
    label: 'Ollama',
    defaultBaseUrl: 'http://localhost:11434',
    defaultModels: ['llama3.1', 'qwen2.5', 'nomic-embed-text'],
    ...openaiLike,
  },
  {
    value: 14,
    label: 'Anthropic Claude',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultModels: [
      'claude-3-5-sonnet-20241022',
      'claude-3-5-haiku-20241022',
      'claude-3-opus-20240229',
      'claude-3-haiku-20240307',
      'claude-3-7-sonnet-20250219',
    ],
    keyFormat: bearer,
    extraFields: [],
    modelList: 'anthropic',
    relay: relayed('anthropic', 'anthropic', ['chat', 'batches']),
  },
  {
    value: 33,
    label: 'AWS Claude',
    defaultBaseUrl: '',
    defaultModels: [
      'claude-3-5-sonnet-20241022',
      'claude-3-5-haiku-20241022',
      'claude-3-haiku-20240307',
      'claude-3-opus-20240229',
      'amazon.titan-embed-text-v2:0',
    ],
    keyFormat: 'AccessKey|SecretAccessKey|Region, or a Bedrock API key (APIKey|Region)',
    extraFields: [],
    // Claude through InvokeModel in Anthropic's format, other chat models through Converse, Titan and Cohere
    // embeddings through InvokeModel (relay/src/providers/bedrock).
    relay: relayed('bedrock', 'anthropic', ['chat', 'embeddings']),
  },
  {
    value: 41,
    label: 'Vertex AI',
    defaultBaseUrl: '',
    defaultModels: [
      'gemini-1.5-pro',
      'gemini-1.5-flash',
      'gemini-2.0-flash',
      'claude-3-5-sonnet-20241022',
      'text-embedding-005',
    ],
    keyFormat: 'the service-account JSON document',
    extraFields: [{ field: 'other', label: 'region, or JSON {"default": region, "<model>": region}' }],
    keyIsDocument: true,
    // Gemini models in Gemini's format; Claude models in Anthropic's; embedding models through `:predict`
    // (relay/src/providers/vertex).
    relay: relayed('vertex', 'gemini', ['chat', 'embeddings']),
  },
  {
    value: 3,
    label: 'Azure OpenAI',
    defaultBaseUrl: '',
    defaultModels: ['gpt-4o', 'gpt-4o-mini', 'gpt-4', 'gpt-35-turbo', 'text-embedding-ada-002'],
    keyFormat: bearer,
    extraFields: [{ field: 'other', label: 'API version, e.g. 2024-12-01-preview' }],
    modelList: 'azure',
    relay: relayed('azure', 'openai', ['chat', 'embeddings', 'images', 'audio', 'videos', 'batches']),
  },
  {
    value: 34,
    label: 'Cohere',
    defaultBaseUrl: 'https://api.cohere.ai',
    defaultModels: ['command-r', 'command-r-plus', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'],
    keyFormat: bearer,
    extraFields: [],
    // Chat in Cohere's v2 format; embeddings and rerank by model name (relay/src/providers/cohere).
    modelList: 'cohere',
    relay: relayed('cohere', 'cohere', ['chat', 'embeddings', 'rerank']),
  },
  {
    value: 39,
    label: 'Cloudflare',
    defaultBaseUrl: 'https://api.cloudflare.com',
    defaultModels: ['@cf/meta/llama-3.1-8b-instruct', '@cf/baai/bge-base-en-v1.5'],
    keyFormat: bearer,
    extraFields: [{ field: 'other', label: 'account id' }],
    modelList: 'cloudflare',
    relay: relayed('cloudflare', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 43,
    label: 'DeepSeek',
    defaultBaseUrl: 'https://api.deepseek.com',
    defaultModels: ['deepseek-chat', 'deepseek-reasoner', 'deepseek-coder'],
    ...openaiLike,
    balance: 'deepseek',
  },
  {
    value: 15,
    label: 'Baidu Wenxin',
    defaultBaseUrl: 'https://aip.baidubce.com',
    defaultModels: ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-128K', 'Embedding-V1'],
    keyFormat: 'APIKey|SecretKey',
    extraFields: [],
    // Wenxin's own shape after a token exchange (relay/src/providers/baidu).
    relay: relayed('baidu', 'wenxin', ['chat']),
  },
  {
    value: 46,
    label: 'Baidu Wenxin V2',
    defaultBaseUrl: 'https://qianfan.baidubce.com',
    defaultModels: ['ernie-4.0-8k-latest', 'ernie-3.5-8k', 'ernie-speed-128k'],
    keyFormat: bearer,
    extraFields: [],
    relay: relayed('qianfan', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 17,
    label: 'Alibaba Qwen',
    defaultBaseUrl: 'https://dashscope.aliyuncs.com',
    defaultModels: ['qwen-turbo', 'qwen-plus', 'qwen-max', 'qwen-long', 'text-embedding-v1'],
    keyFormat: bearer,
    extraFields: [{ field: 'other', label: 'plugin parameter (X-DashScope-Plugin)' }],
    modelList: 'dashscope',
    relay: relayed('dashscope', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 18,
    label: 'iFlytek Spark',
    defaultBaseUrl: 'https://spark-api-open.xf-yun.com',
    defaultModels: ['lite', 'generalv3', 'pro-128k', 'generalv3.5', 'max-32k', '4.0Ultra', 'x1'],
    keyFormat: 'the APIPassword of the HTTP API (or APIKey:APISecret)',
    extraFields: [],
    // Spark's OpenAI-compatible HTTP API (relay/src/providers/spark); the WebSocket API's key is refused.
    relay: relayed('spark', 'openai', ['chat']),
  },
  {
    value: 16,
    label: 'Zhipu',
    defaultBaseUrl: 'https://open.bigmodel.cn',
    defaultModels: ['glm-4-plus', 'glm-4-air', 'glm-4-flash', 'embedding-3'],
    keyFormat: 'id.secret',
    extraFields: [],
    relay: relayed('zhipu-legacy', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 26,
    label: 'Zhipu GLM-4',
    defaultBaseUrl: 'https://open.bigmodel.cn',
    defaultModels: ['glm-4', 'glm-4v', 'glm-4-flash', 'glm-4-plus', 'embedding-2'],
    keyFormat: 'id.secret',
    extraFields: [],
    relay: relayed('zhipu', 'openai', ['chat', 'embeddings', 'images']),
  },
  {
    value: 24,
    label: 'Google Gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultModels: ['gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-2.0-flash', 'text-embedding-004'],
    keyFormat: bearer,
    extraFields: [{ field: 'other', label: 'API version, e.g. v1beta' }],
    modelList: 'gemini',
    relay: relayed('gemini', 'gemini', ['chat', 'embeddings']),
  },
  {
    value: 11,
    label: 'Google PaLM2 (retired)',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultModels: ['PaLM-2'],
    keyFormat: bearer,
    extraFields: [],
    relay: {
      kind: 'retired',
      reason: 'Google retired PaLM 2 and its API no longer answers: use a Google Gemini (24) channel instead',
      replacedBy: 24,
    },
  },
  {
    value: 47,
    label: 'Xinference',
    defaultBaseUrl: '',
    defaultModels: ['qwen2.5-instruct', 'bge-m3', 'bge-reranker-v2-m3'],
    ...openaiLike,
  },
  {
    value: 25,
    label: 'Moonshot',
    defaultBaseUrl: 'https://api.moonshot.cn',
    defaultModels: ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
    ...openaiLike,
  },
  {
    value: 20,
    label: 'OpenRouter',
    defaultBaseUrl: 'https://openrouter.ai/api',
    defaultModels: ['openai/gpt-4o', 'anthropic/claude-3.5-sonnet', 'google/gemini-pro-1.5'],
    ...openaiLike,
  },
  {
    value: 19,
    label: '360',
    defaultBaseUrl: 'https://api.360.cn',
    defaultModels: ['360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1'],
    ...openaiLike,
  },
  {
    value: 23,
    label: 'Tencent Hunyuan',
    defaultBaseUrl: 'https://api.hunyuan.cloud.tencent.com',
    defaultModels: ['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro'],
    keyFormat: 'the API key of the OpenAI-compatible endpoint',
    extraFields: [],
    relay: relayed('hunyuan', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 31,
    label: 'Lingyi',
    defaultBaseUrl: 'https://api.lingyiwanwu.com',
    defaultModels: ['yi-large', 'yi-medium', 'yi-spark', 'yi-lightning'],
    ...openaiLike,
  },
  {
    value: 35,
    label: 'MiniMax',
    defaultBaseUrl: 'https://api.minimax.chat',
    defaultModels: ['abab6.5-chat', 'abab6.5s-chat', 'abab5.5-chat'],
    keyFormat: bearer,
    extraFields: [],
    relay: relayed('minimax', 'openai', ['chat']),
  },
  {
    value: 37,
    label: 'Dify',
    defaultBaseUrl: 'https://api.dify.ai',
    defaultModels: ['dify'],
    keyFormat: 'the app API key',
    extraFields: [],
    // Dify's own wire, reached through the canonical chat shape (relay/src/providers/dify).
    relay: relayed('dify', 'dify', ['chat']),
  },
  {
    value: 38,
    label: 'Jina',
    defaultBaseUrl: 'https://api.jina.ai',
    defaultModels: ['jina-embeddings-v3', 'jina-reranker-v2-base-multilingual'],
    keyFormat: bearer,
    extraFields: [],
    relay: relayed('jina', 'openai', ['embeddings', 'rerank']),
  },
  {
    value: 40,
    label: 'SiliconCloud',
    defaultBaseUrl: 'https://api.siliconflow.cn',
    defaultModels: ['deepseek-ai/DeepSeek-V3', 'Qwen/Qwen2.5-72B-Instruct', 'BAAI/bge-m3'],
    ...openaiLike,
    balance: 'siliconflow',
  },
  {
    value: 42,
    label: 'Mistral AI',
    defaultBaseUrl: 'https://api.mistral.ai',
    defaultModels: ['mistral-large-latest', 'mistral-small-latest', 'open-mistral-nemo', 'mistral-embed'],
    ...openaiLike,
  },
  {
    value: 8,
    label: 'Custom channel',
    defaultBaseUrl: '',
    defaultModels: [],
    keyFormat: bearer,
    extraFields: [],
    balance: 'openai-billing',
    modelList: 'openai',
    relay: compatible,
  },
  {
    value: 22,
    label: 'FastGPT knowledge base',
    defaultBaseUrl: 'https://fastgpt.run/api/openapi',
    defaultModels: [],
    keyFormat: 'the app API key (fastgpt-…)',
    extraFields: [],
    relay: relayed('fastgpt', 'openai', ['chat']),
  },
  {
    value: 21,
    label: 'AI Proxy',
    defaultBaseUrl: 'https://api.aiproxy.io',
    defaultModels: [],
    keyFormat: bearer,
    extraFields: [],
    modelList: 'openai',
    // AI Proxy's OpenAI-compatible API (relay/src/providers/aiproxy); its knowledge-base ask API is not carried.
    relay: relayed('aiproxy', 'openai', ['chat', 'embeddings']),
  },
  {
    value: 44,
    label: 'M3E embeddings',
    defaultBaseUrl: 'https://api.moka.ai',
    defaultModels: ['m3e-base', 'm3e-large', 'm3e-small'],
    keyFormat: bearer,
    extraFields: [],
    relay: relayed('m3e', 'openai', ['embeddings']),
  },
  {
    value: 45,
    label: 'Volcano Ark / Doubao',
    defaultBaseUrl: 'https://ark.cn-beijing.volces.com',
    defaultModels: ['doubao-pro-32k', 'doubao-lite-32k', 'doubao-embedding'],
    keyFormat: bearer,
    extraFields: [],
    relay: relayed('ark', 'openai', ['chat', 'embeddings', 'images']),
  },
  {
    value: 48,
    label: 'xAI',
    defaultBaseUrl: 'https://api.x.ai',
    defaultModels: ['grok-2', 'grok-2-vision', 'grok-beta'],
    ...openaiLike,
  },
  {
    value: 50,
    label: 'Kling (video)',
    defaultBaseUrl: 'https://api-singapore.klingai.com',
    defaultModels: ['kling-v2-1', 'kling-v2-master', 'kling-v1-6'],
    keyFormat: 'access key|secret key, one pair per line',
    extraFields: [],
    relay: videoTasks,
  },
  {
    value: 51,
    label: 'Jimeng (video)',
    defaultBaseUrl: 'https://visual.volcengineapi.com',
    defaultModels: ['jimeng_t2v_v30', 'jimeng_t2v_v30_1080p'],
    keyFormat: 'Volcengine AccessKeyID|SecretAccessKey, one pair per line',
    extraFields: [],
    relay: videoTasks,
  },
  {
    value: 52,
    label: 'Vidu (video)',
    defaultBaseUrl: 'https://api.vidu.cn',
    defaultModels: ['viduq2', 'viduq1', 'vidu2.0'],
    keyFormat: 'one Vidu API key per line',
    extraFields: [],
    relay: videoTasks,
  },
  {
    value: 54,
    label: 'Doubao Seedance (video)',
    defaultBaseUrl: 'https://ark.cn-beijing.volces.com',
    defaultModels: ['doubao-seedance-1-0-pro-250528', 'doubao-seedance-1-0-lite-t2v-250428'],
    keyFormat: 'one Ark API key per line',
    extraFields: [],
    relay: videoTasks,
  },
  {
    value: 55,
    label: 'Sora (OpenAI video)',
    defaultBaseUrl: 'https://api.openai.com',
    defaultModels: ['sora-2', 'sora-2-pro'],
    keyFormat: bearer,
    extraFields: [],
    relay: videoTasks,
  },
  {
    value: 60,
    label: 'Gemini Veo (video)',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultModels: ['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview', 'veo-3.0-generate-001'],
    keyFormat: 'one Gemini API key per line',
    extraFields: [],
    relay: videoTasks,
  },
];

/** Every provider type in the order the console lists them. */
export const PROVIDER_TYPES: readonly ProviderType[] = Object.freeze(list);

const byValue = new Map(list.map((p) => [p.value, p]));

export function findProviderType(value: number): ProviderType | undefined {
  return byValue.get(value);
}

export const isKnownProviderType = (value: number): boolean => byValue.has(value);

/** How the relay serves a type, or undefined for a type the catalogue does not know. */
export const relayingOf = (value: number): Relaying | undefined => byValue.get(value)?.relay;

/**
 * Why a new channel of this type is refused (the console API, the operator), or undefined when the relay serves
 * it (chat and friends, or tasks). Unknown types are refused elsewhere ("unknown channel type").
 */
export function refusalOfType(value: number): string | undefined {
  const relay = relayingOf(value);
  if (relay === undefined) return undefined;
  if (relay.kind === 'unserved' || relay.kind === 'retired') return relay.reason;
  return undefined;
}

/**
 * Why a credential of this type cannot work, or undefined when its shape is one the relay can use. iFlytek Spark's
 * WebSocket API took `APPID|APISecret|APIKey`; the relay speaks its HTTP API, which wants the APIPassword shown
 * beside them in Spark's console (or `APIKey:APISecret`), so the old triple is refused rather than sent and failed.
 */
export function refusalOfKey(type: number, key: string): string | undefined {
  if (type === ProviderTypeId.Xunfei && key.includes('|'))
    return "iFlytek Spark's APPID|APISecret|APIKey is the WebSocket API's credential; the relay uses Spark's HTTP API: enter the APIPassword shown in the Spark console (or APIKey:APISecret)";
  if (type === ProviderTypeId.Kling || type === ProviderTypeId.Jimeng) {
    const [access, secret, ...rest] = key.split('|');
    if (!access?.trim() || !secret?.trim() || rest.length > 0)
      return type === ProviderTypeId.Kling
        ? "a Kling key is the access key and the secret key joined by '|' (AccessKey|SecretKey): the relay signs each call's JWT with them"
        : "a Jimeng key is the Volcengine AccessKeyID and SecretAccessKey joined by '|' (AccessKey|SecretKey): the relay signs each call with them";
  }
  if (type === ProviderTypeId.Vidu && /\s|\|/.test(key.trim()))
    return 'a Vidu key is one API token (sent as "Authorization: Token <key>"), without spaces or "|"';
  return undefined;
}

/** What a channel of this type carries (none for a type the relay does not serve). */
export const carriedBy = (value: number): readonly Carried[] => {
  const relay = relayingOf(value);
  return relay && (relay.kind === 'relayed' || relay.kind === 'tasks') ? relay.carries : [];
};

/** `GET /api/models`: type → default model list. */
export function defaultModelsByType(): Record<number, string[]> {
  const result: Record<number, string[]> = {};
  for (const p of list) result[p.value] = [...p.defaultModels];
  return result;
}

/** Every known model with the label of the first provider type that offers it, sorted by name. */
export function knownModelOwners(): { model: string; owner: string }[] {
  const owners = new Map<string, string>();
  for (const p of list) for (const m of p.defaultModels) if (!owners.has(m)) owners.set(m, p.label);
  return [...owners]
    .map(([model, owner]) => ({ model, owner }))
    .sort((a, b) => a.model.localeCompare(b.model));
}
