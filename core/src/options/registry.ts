import { z } from 'zod';
import {
  DEFAULT_LONG_CONTEXT_TIERS,
  DEFAULT_REQUEST_FEES,
  DEFAULT_SERVICE_TIER_RATIO,
} from '../billing/default-price-shapes.ts';
import {
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from '../billing/default-ratios.ts';
import {
  LONG_CONTEXT_TIERS_SHAPE,
  longContextTiersSchema,
  REQUEST_FEES_SHAPE,
  requestFeesSchema,
  SERVICE_TIER_RATIO_SHAPE,
  serviceTierRatioSchema,
} from '../billing/price-shapes.ts';
import { groupQuotaWindowsSchema, isKnownTimeZone } from '../billing/quota-windows.ts';
import {
  CHANNEL_AFFINITY_SHAPE,
  channelAffinitySchema,
  DEFAULT_CHANNEL_AFFINITY,
} from '../channels/affinity-rules.ts';
import { patternProblem } from '../content-logs/redaction.ts';
import { isAdmin, isRoot } from '../domain/users.ts';
import { formatRange, parseRange } from '../net/address-ranges.ts';
import {
  address,
  bool,
  content,
  float,
  int,
  json,
  link,
  list,
  type OptionSpec,
  oneOf,
  secret,
  text,
} from './kinds.ts';
import { limitMapSchema, limitSetSchema } from './rate-limits.ts';

const name = z.string().trim().min(1, 'a name must not be empty');
const number = z.number({ error: 'must be a number' });
const nonNegative = number.nonnegative('must not be negative');
const count = (min: number) => number.int('must be a whole number').min(min, `must be ${min} or more`);
const ratioMap = z.record(name, nonNegative);
const textMap = z.record(name, z.string({ error: 'must be text' }));

const groupRatioSchema = ratioMap.refine((groups) => Object.hasOwn(groups, 'default'), {
  // Every user starts in `default` and visitors are shown its price, so it cannot go.
  message: 'the "default" group is missing',
});
const GROUP_RATIO = 'a JSON object mapping each group name to a ratio of 0 or more, "default" included';
const MODEL_RATIO = 'a JSON object mapping each model name to a ratio of 0 or more';

/**
 * A group's own prices (docs/adr/0017): group -> model -> number. A group name may not hold "/", which
 * separates group and model where one entry is named on its own (`vip/gpt-4o`, owned by a ModelPrice).
 */
const groupName = name.refine((group) => !group.includes('/'), {
  message: 'a group name must not contain "/"',
});
const groupMap = z.record(groupName, ratioMap);
const GROUP_MODEL_RATIO =
  'a JSON object mapping each group name (without "/") to an object of model name to a ratio of 0 or more';

const chatsSchema = z.array(
  z
    .record(name, z.string().trim().min(1, 'a link template must not be empty'))
    .refine((entry) => Object.keys(entry).length === 1, { message: 'each entry must name exactly one chat' }),
);

const DOMAIN =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

const DEFAULT_AUTO_DISABLE_KEYWORDS = [
  'Your credit balance is too low',
  'This organization has been disabled.',
  'You exceeded your current quota',
  'Permission denied',
  'The security token included in the request is invalid',
  'Operation not allowed',
  'Your account is not authorized',
];

// {key} becomes sk-<token key>, {address} the URL-encoded ServerAddress.
const DEFAULT_CHATS: Record<string, string>[] = [
  { NextChat: 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
  {
    'Lobe Chat':
      'https://chat-preview.lobehub.com/?settings={"keyVaults":{"openai":{"apiKey":"{key}","baseURL":"{address}/v1"}}}',
  },
  { OpenCat: 'opencat://team/join?domain={address}&token={key}' },
];

/**
 * Every option the product knows, with its kind, default and validator. Grouped as the console shows them.
 * Adding a key here is the only way to add an option; nothing else reads the `options` table.
 */
export const optionRegistry = {
  // Sign-in and registration
  PasswordLoginEnabled: bool(true),
  /** Administrators without an authenticator-app second factor must enrol before anything else (docs/adr/0044). */
  AdminTwoFactorRequired: bool(false),
  PasswordRegisterEnabled: bool(true),
  RegisterEnabled: bool(true),
  EmailVerificationEnabled: bool(false),
  TurnstileCheckEnabled: bool(false),
  TurnstileSiteKey: text(),
  TurnstileSecretKey: text(),
  GitHubOAuthEnabled: bool(false),
  GitHubClientId: text(),
  GitHubClientSecret: text(),
  LinuxDOOAuthEnabled: bool(false),
  LinuxDOClientId: text(),
  LinuxDOClientSecret: text(),
  WeChatAuthEnabled: bool(false),
  WeChatServerAddress: address(),
  WeChatServerToken: text(),
  WeChatAccountQRCodeImageURL: text(),
  TelegramOAuthEnabled: bool(false),
  TelegramBotToken: text(),
  TelegramBotName: text(),
  'oidc.enabled': bool(false),
  'oidc.client_id': text(),
  'oidc.client_secret': text(),
  'oidc.well_known': address(),
  'oidc.authorization_endpoint': address(),
  'oidc.token_endpoint': address(),
  'oidc.user_info_endpoint': address(),

  // Mail
  SMTPServer: text(),
  SMTPPort: int(587, { min: 1, max: 65535 }),
  SMTPAccount: text(),
  SMTPFrom: text('', {
    check: { test: (v) => v.includes('@'), problem: 'must be empty or an email address' },
  }),
  SMTPToken: secret(text()),
  SMTPSSLEnabled: bool(false),
  EmailDomainRestrictionEnabled: bool(false),
  EmailAliasRestrictionEnabled: bool(false),
  EmailDomainWhitelist: list(
    ',',
    [
      'gmail.com',
      '163.com',
      '126.com',
      'qq.com',
      'outlook.com',
      'hotmail.com',
      'icloud.com',
      'yahoo.com',
      'foxmail.com',
    ],
    {
      normalise: (domain) => domain.toLowerCase(),
      check: {
        test: (domain) => DOMAIN.test(domain),
        problem: 'must be a comma-separated list of domain names',
      },
    },
  ),

  // Addresses and payment
  ServerAddress: address(),
  WorkerUrl: address(),
  WorkerValidKey: secret(text()),
  PayAddress: address(),
  CustomCallbackAddress: address(),
  EpayId: text(),
  EpayKey: secret(text()),
  /** Money charged per unit of quota (one dollar's worth) in the payment currency. */
  Price: float(7.3, { min: 0 }),
  /** Smallest online top-up, in units. */
  MinTopUp: int(1, { min: 1 }),
  /** Stripe's secret API key (`sk_...`) for Checkout; plans are sold by card once it and the webhook secret are set. */
  StripeApiSecret: secret(text()),
  /** The signing secret (`whsec_...`) of the webhook endpoint `/api/stripe/webhook`. */
  StripeWebhookSecret: secret(text()),
  /** Creem's API key; plans with a Creem product are sold through Creem once it and the webhook secret are set. */
  CreemApiKey: secret(text()),
  /** The secret Creem signs its webhooks (`/api/creem/webhook`) with. */
  CreemWebhookSecret: secret(text()),
  /** Sends Creem checkouts to its test API. */
  CreemTestMode: bool(false),
  /** Payment multiplier per group; a group not listed pays 1. */
  TopupGroupRatio: json(
    ratioMap,
    { default: 1, vip: 1, svip: 1 },
    'a JSON object mapping each group name to a ratio of 0 or more',
  ),

  // Requests to addresses users choose (webhooks), docs/adr/0039
  /** Refuses user-chosen addresses in private, loopback, link-local and reserved ranges. */
  'fetch_setting.enable_ssrf_protection': bool(true),
  /** Ranges (CIDR or single addresses, one a line) such addresses may reach anyway, e.g. an in-cluster relay. */
  'fetch_setting.allowed_ranges': list('\n', [], {
    normalise: (item) => {
      const range = parseRange(item);
      return range ? formatRange(range) : item;
    },
    check: {
      test: (item) => parseRange(item) !== undefined,
      problem: 'must be IP ranges such as 10.0.0.0/8 or fd00::/8, or single addresses, one a line',
    },
  }),

  // Branding and text
  SystemName: text('Turnpike', { required: true }),
  Logo: text(),
  Notice: content(),
  About: content(),
  HomePageContent: content(),
  Footer: content(),
  TopUpLink: link(),
  'general_setting.docs_link': link(),

  // Display and behaviour
  QuotaPerUnit: float(500000, { above: 0 }),
  RetryTimes: int(0, { min: 0, max: 10 }),
  DisplayInCurrencyEnabled: bool(true),
  DisplayTokenStatEnabled: bool(true),
  DefaultCollapseSidebar: bool(false),
  DemoSiteEnabled: bool(false),
  SelfUseModeEnabled: bool(false),
  Chats: json(
    chatsSchema,
    DEFAULT_CHATS,
    'a JSON list of objects, each mapping one chat name to its link template',
  ),

  // Drawing and tasks (Midjourney, Suno)
  DrawingEnabled: bool(true),
  TaskEnabled: bool(true),
  MjNotifyEnabled: bool(false),
  MjAccountFilterEnabled: bool(false),
  MjForwardUrlEnabled: bool(true),
  MjModeClearEnabled: bool(false),
  MjActionCheckSuccessEnabled: bool(true),

  // Sensitive words
  CheckSensitiveEnabled: bool(true),
  CheckSensitiveOnPromptEnabled: bool(true),
  CheckSensitiveOnCompletionEnabled: bool(false),
  StopOnSensitiveEnabled: bool(true),
  /** One word or phrase per line, matched case-insensitively. */
  SensitiveWords: list('\n', ['test_sensitive']),

  // Logs and data dashboard
  LogConsumeEnabled: bool(true),
  /** Usage logs older than this many days are deleted; 0 keeps them forever. */
  LogRetentionDays: int(0, { min: 0 }),
  DataExportEnabled: bool(true),
  /** Minutes between flushes of the dashboard counters. */
  DataExportInterval: int(5, { min: 1 }),
  DataExportDefaultTime: oneOf(['hour', 'day', 'week'], 'hour'),

  // Channel health and retries
  /** A channel test slower than this many seconds disables the channel; 0 never does. */
  ChannelDisableThreshold: float(5, { min: 0 }),
  AutomaticDisableChannelEnabled: bool(false),
  AutomaticEnableChannelEnabled: bool(false),
  /** One phrase per line; an upstream error containing one (any case) disables the channel. */
  AutomaticDisableKeywords: list('\n', DEFAULT_AUTO_DISABLE_KEYWORDS),
  /** Rest a channel for a while after repeated failures instead of disabling it on the first one. */
  ChannelCooldownEnabled: bool(false),
  ChannelCooldownFailures: int(3, { min: 1 }),
  ChannelCooldownWindowSeconds: int(60, { min: 1 }),
  ChannelCooldownMinutes: int(5, { min: 1 }),
  /** Session affinity: which header or body field names a session, on which paths, for how long (ADR 0027). */
  ChannelAffinity: json(channelAffinitySchema, DEFAULT_CHANNEL_AFFINITY, CHANNEL_AFFINITY_SHAPE),
  /** Retry on another channel when an upstream answers 200 with no output. */
  RetryEmptyResponseEnabled: bool(false),
  /** Give up on a stream (and retry elsewhere) when no first token arrives in this many seconds; 0 waits. */
  FirstTokenTimeoutSeconds: int(0, { min: 0 }),
  /** A stream whose upstream sends nothing for this many seconds is ended and billed as far as it got; 0 waits. */
  StreamingTimeoutSeconds: int(300, { min: 0 }),

  // Quota
  QuotaForNewUser: int(0, { min: 0 }),
  QuotaForInviter: int(0, { min: 0 }),
  QuotaForInvitee: int(0, { min: 0 }),
  QuotaRemindThreshold: int(1000, { min: 0 }),
  /** Tokens reserved up front for a request that names no max tokens. */
  PreConsumedQuota: int(500, { min: 0 }),
  StreamCacheQueueLength: int(0, { min: 0 }),

  // Prices and groups
  ModelRatio: json(ratioMap, { ...DEFAULT_MODEL_RATIO }, MODEL_RATIO),
  CompletionRatio: json(ratioMap, { ...DEFAULT_COMPLETION_RATIO }, MODEL_RATIO),
  CacheRatio: json(ratioMap, { ...DEFAULT_CACHE_RATIO }, MODEL_RATIO),
  /** USD per call; a model listed here is billed per call, not per token. */
  ModelPrice: json(
    ratioMap,
    { ...DEFAULT_MODEL_PRICE },
    'a JSON object mapping each model name to a price in USD of 0 or more',
  ),
  /** Cache-write (creation) price / input price; a model not listed pays 1.25 × input for a cache write. */
  CreateCacheRatio: json(ratioMap, {}, MODEL_RATIO),
  /** Anthropic's 1-hour cache-write price / input price; a model not listed pays 2 × input for a 1-hour write. */
  CreateCache1hRatio: json(ratioMap, {}, MODEL_RATIO),
  /** Long-context tiers: past a number of prompt tokens the whole call costs more (docs/adr/0042). */
  LongContextTiers: json(
    longContextTiersSchema,
    structuredClone(DEFAULT_LONG_CONTEXT_TIERS),
    LONG_CONTEXT_TIERS_SHAPE,
  ),
  /** Multiplier of the token bill by the service tier the answer reports (OpenAI priority / flex, …). */
  ServiceTierRatio: json(
    serviceTierRatioSchema,
    structuredClone(DEFAULT_SERVICE_TIER_RATIO),
    SERVICE_TIER_RATIO_SHAPE,
  ),
  /** USD per web search and per image, added to the token bill. */
  RequestFees: json(requestFeesSchema, structuredClone(DEFAULT_REQUEST_FEES), REQUEST_FEES_SHAPE),
  /**
   * Prices of a model for one group only; they win over the maps above for users and tokens of that group.
   * A group's own ModelRatio or ModelPrice is the price that group pays: GroupRatio does not multiply it.
   */
  GroupModelRatio: json(groupMap, {}, GROUP_MODEL_RATIO),
  GroupCompletionRatio: json(groupMap, {}, GROUP_MODEL_RATIO),
  GroupCacheRatio: json(groupMap, {}, GROUP_MODEL_RATIO),
  GroupCreateCacheRatio: json(groupMap, {}, GROUP_MODEL_RATIO),
  GroupCreateCache1hRatio: json(groupMap, {}, GROUP_MODEL_RATIO),
  /** USD per call for one group: group -> model -> price. */
  GroupModelPrice: json(
    groupMap,
    {},
    'a JSON object mapping each group name (without "/") to an object of model name to a price in USD of 0 or more',
  ),
  GroupRatio: json(groupRatioSchema, { default: 1, vip: 1, svip: 1 }, GROUP_RATIO),
  /** Groups a user may pick for a token, with the description shown to them. */
  UserUsableGroups: json(
    textMap,
    { default: 'Default group', vip: 'VIP group' },
    'a JSON object mapping each group name to its description',
  ),

  // Per-user request rate limit (relay)
  ModelRequestRateLimitEnabled: bool(false),
  /** Requests of any outcome per window; 0 is unlimited. */
  ModelRequestRateLimitCount: int(0, { min: 0 }),
  ModelRequestRateLimitSuccessCount: int(1000, { min: 1 }),
  // At least 1: a window of no time counts nothing; the switch above is how the limit is turned off.
  ModelRequestRateLimitDurationMinutes: int(1, { min: 1 }),
  /** Per-group override: group → [requests of any outcome (0 = unlimited), successful requests]. */
  ModelRequestRateLimitGroup: json(
    z.record(name, z.tuple([count(0), count(1)], { error: 'must be a pair [total, success]' })),
    {},
    'a JSON object mapping each group to [total count of 0 or more, success count of 1 or more]',
  ),

  // Requests per minute, tokens per minute and concurrent requests (relay, docs/adr/0028); 0 or absent: no limit.
  /** Every user's own limits, unless the user's group has an entry in `RateLimitGroups`. */
  RateLimitUserDefault: json(
    limitSetSchema,
    {},
    'a JSON object {"rpm": n, "tpm": n, "concurrency": n}, each a whole number of 0 or more (0 is no limit)',
  ),
  /** group → the limits of each user of that group (replacing `RateLimitUserDefault`). */
  RateLimitGroups: json(
    limitMapSchema,
    {},
    'a JSON object mapping each group to {"rpm", "tpm", "concurrency"}, each a whole number of 0 or more',
  ),
  /** model → the limits of that model across every caller. */
  RateLimitModels: json(
    limitMapSchema,
    {},
    'a JSON object mapping each model to {"rpm", "tpm", "concurrency"}, each a whole number of 0 or more',
  ),

  // Budgets that reset (docs/adr/0043): windows of quota or requests per day, week, month or rolling hours.
  /** group → the windows every user of that group has, each user their own. */
  GroupQuotaWindows: json(
    groupQuotaWindowsSchema,
    {},
    'a JSON object mapping each group to a list of windows {"unit": "quota"|"requests", "limit": n, "period": "day"|"week"|"month"|"rolling", "hours"?: n}',
  ),
  /** The zone calendar windows (day, week, month) reset in: an IANA name such as Asia/Shanghai. */
  QuotaWindowTimeZone: text('UTC', {
    required: true,
    check: { test: isKnownTimeZone, problem: 'must be a time zone name such as UTC or Asia/Shanghai' },
  }),

  // Governance (docs/adr/0045): daily check-ins, the audit log, content logs
  /** Daily check-ins (the reference's `checkin_setting`): once a day per user, a quota between min and max. */
  'checkin_setting.enabled': bool(false),
  'checkin_setting.min_quota': int(1000, { min: 0 }),
  /** Below min_quota, the two are read the other way round (as the reference does), so saving one at a time works. */
  'checkin_setting.max_quota': int(10000, { min: 0 }),
  /** Audit rows older than this many days are deleted; 0 keeps them. Root's: no administrator shortens their own trail. */
  AuditRetentionDays: int(0, { min: 0 }),
  /** Groups whose calls keep their prompt and answer (content logs); empty, the default: no group's. */
  ContentLogGroups: list(',', []),
  /** Content logs older than this many days are deleted. */
  ContentLogRetentionDays: int(30, { min: 1 }),
  /**
   * Days a response answered on /v1/responses with `store` not false is kept (docs/adr/0051): 30, as OpenAI keeps
   * them; 0 keeps none (an OpenAI channel's own ids are still routed back to it).
   */
  ResponsesRetentionDays: int(30, { min: 0, max: 3650 }),
  /** The most one call keeps, prompt and answer together, in bytes; the rest is cut and the log marked. */
  ContentLogMaxBytes: int(32768, { min: 1024, max: 1048576 }),
  /** Regular expressions, one a line, whose matches are replaced before a content log is written. */
  ContentLogRedactPatterns: list('\n', [], {
    check: {
      test: (pattern) => patternProblem(pattern) === undefined,
      problem:
        'must be regular expressions, one a line, that compile, match no empty text and cannot take exponential time (no repetition inside a repetition)',
    },
  }),

  // Model-specific settings
  'global.pass_through_request_enabled': bool(false),
  'general_setting.ping_interval_enabled': bool(false),
  'general_setting.ping_interval_seconds': int(60, { min: 1 }),
  /** model → header → values, added to requests sent to Anthropic (e.g. beta flags). */
  'claude.model_headers_settings': json(
    z.record(name, z.record(name, z.array(z.string({ error: 'must be text' })))),
    {},
    'a JSON object mapping each model to an object of header name to a list of values',
  ),
  'claude.default_max_tokens': json(
    z.record(name, count(1)),
    { default: 8192 },
    'a JSON object mapping each model (or "default") to a whole number of tokens above 0',
  ),
  'claude.thinking_adapter_enabled': bool(true),
  'claude.thinking_adapter_budget_tokens_percentage': float(0.8, { min: 0.1, max: 1 }),
  'gemini.safety_settings': json(
    textMap,
    { default: 'OFF', HARM_CATEGORY_CIVIC_INTEGRITY: 'BLOCK_NONE' },
    'a JSON object mapping each harm category (or "default") to a threshold',
  ),
  'gemini.version_settings': json(
    textMap,
    { default: 'v1beta', 'gemini-1.0-pro': 'v1' },
    'a JSON object mapping each model (or "default") to an API version',
  ),
  'gemini.supported_imagine_models': json(
    z.array(name),
    [
      'gemini-2.0-flash-exp-image-generation',
      'gemini-2.0-flash-preview-image-generation',
      'gemini-2.5-flash-image',
    ],
    'a JSON list of model names',
  ),
  'gemini.thinking_adapter_enabled': bool(false),
  'gemini.thinking_adapter_budget_tokens_percentage': float(0.6, { min: 0.1, max: 1 }),
} satisfies Record<string, OptionSpec<unknown>>;

type Registry = typeof optionRegistry;

/** The name of a known option. */
export type OptionKey = keyof Registry;

/** The parsed type of an option: `OptionValue<'RetryTimes'>` is `number`. */
export type OptionValue<K extends OptionKey> = Registry[K] extends OptionSpec<infer T> ? T : never;

/**
 * Who may read and write an option through /api/option/: `admin` (role 10 and up) for the operation settings the
 * console shows administrators (spec 01 section 1: operation, rate-limit and model tabs), `root` for the rest:
 * sign-in providers, mail, payment and addresses, branding, and the switches that change what a balance is worth
 * or whether anything is billed (QuotaPerUnit, SelfUseModeEnabled, DemoSiteEnabled). Secrets are root's whatever
 * is listed here, and are never read back by anyone.
 */
export type OptionAudience = 'admin' | 'root';

const operationOptionKeys: ReadonlySet<OptionKey> = new Set<OptionKey>([
  // Operation tab, general (links shown to users, retries and timeouts, display)
  'TopUpLink',
  'general_setting.docs_link',
  'RetryTimes',
  'RetryEmptyResponseEnabled',
  'FirstTokenTimeoutSeconds',
  'StreamingTimeoutSeconds',
  'DisplayInCurrencyEnabled',
  'DisplayTokenStatEnabled',
  'DefaultCollapseSidebar',
  'Chats',
  // Drawing and tasks
  'DrawingEnabled',
  'TaskEnabled',
  'MjNotifyEnabled',
  'MjAccountFilterEnabled',
  'MjForwardUrlEnabled',
  'MjModeClearEnabled',
  'MjActionCheckSuccessEnabled',
  // Sensitive words
  'CheckSensitiveEnabled',
  'CheckSensitiveOnPromptEnabled',
  'CheckSensitiveOnCompletionEnabled',
  'StopOnSensitiveEnabled',
  'SensitiveWords',
  // Logs and data dashboard
  'LogConsumeEnabled',
  'LogRetentionDays',
  'DataExportEnabled',
  'DataExportInterval',
  'DataExportDefaultTime',
  // Channel health and retries (monitoring)
  'ChannelDisableThreshold',
  'AutomaticDisableChannelEnabled',
  'AutomaticEnableChannelEnabled',
  'AutomaticDisableKeywords',
  'ChannelCooldownEnabled',
  'ChannelCooldownFailures',
  'ChannelCooldownWindowSeconds',
  'ChannelCooldownMinutes',
  // Quota
  'QuotaForNewUser',
  'QuotaForInviter',
  'QuotaForInvitee',
  'QuotaRemindThreshold',
  'PreConsumedQuota',
  'StreamCacheQueueLength',
  // Prices and groups (the operation tab's pricing editor)
  'ModelRatio',
  'CompletionRatio',
  'CacheRatio',
  'ModelPrice',
  'CreateCacheRatio',
  'CreateCache1hRatio',
  'LongContextTiers',
  'ServiceTierRatio',
  'RequestFees',
  'GroupModelRatio',
  'GroupCompletionRatio',
  'GroupCacheRatio',
  'GroupCreateCacheRatio',
  'GroupCreateCache1hRatio',
  'GroupModelPrice',
  'GroupRatio',
  'UserUsableGroups',
  // Rate-limit tab
  'ModelRequestRateLimitEnabled',
  'ModelRequestRateLimitCount',
  'ModelRequestRateLimitSuccessCount',
  'ModelRequestRateLimitDurationMinutes',
  'ModelRequestRateLimitGroup',
  'RateLimitUserDefault',
  'RateLimitGroups',
  'RateLimitModels',
  'GroupQuotaWindows',
  'QuotaWindowTimeZone',
  // Check-ins and content logs (an administrator turns content logs on for a group; docs/adr/0045)
  'checkin_setting.enabled',
  'checkin_setting.min_quota',
  'checkin_setting.max_quota',
  'ContentLogGroups',
  'ContentLogRetentionDays',
  'ResponsesRetentionDays',
  'ContentLogMaxBytes',
  'ContentLogRedactPatterns',
  // Models tab
  'global.pass_through_request_enabled',
  'general_setting.ping_interval_enabled',
  'general_setting.ping_interval_seconds',
  'claude.model_headers_settings',
  'claude.default_max_tokens',
  'claude.thinking_adapter_enabled',
  'claude.thinking_adapter_budget_tokens_percentage',
  'gemini.safety_settings',
  'gemini.version_settings',
  'gemini.supported_imagine_models',
  'gemini.thinking_adapter_enabled',
  'gemini.thinking_adapter_budget_tokens_percentage',
]);

/** Who may read and write an option; unknown keys and secrets are root's. */
export function optionAudience(key: string): OptionAudience {
  return isOptionKey(key) && operationOptionKeys.has(key) && !isSecretOptionKey(key) ? 'admin' : 'root';
}

/** Whether a user of this role may read and write the option. */
export function mayManageOption(key: string, role: number): boolean {
  return isRoot(role) || (isAdmin(role) && optionAudience(key) === 'admin');
}

/** Reads the current (or about-to-be) value of any option; handed to cross-option rules. */
export type OptionReader = <K extends OptionKey>(key: K) => OptionValue<K>;

/** Every known key, in registry order (the order the listing uses). */
export const optionKeys = Object.freeze(Object.keys(optionRegistry) as OptionKey[]);

export function isOptionKey(key: string): key is OptionKey {
  return Object.hasOwn(optionRegistry, key);
}

function specOf(key: OptionKey): OptionSpec<unknown> {
  return optionRegistry[key] as OptionSpec<unknown>;
}

/**
 * Whether an option must never be listed back: its last dotted segment ends in Token, Secret or Key (any case,
 * so `oidc.client_secret` counts; the reference's case-sensitive check leaks it), or it is marked secret.
 */
export function isSecretOptionKey(key: string): boolean {
  const lastSegment = key.slice(key.lastIndexOf('.') + 1);
  return /(token|secret|key)$/i.test(lastSegment) || (isOptionKey(key) && specOf(key).secret);
}

/** The default of an option as stored text. */
export function defaultOptionText(key: OptionKey): string {
  return specOf(key).default;
}

/** Parsed values are shared by every reader of a cache, so none of them may change one in place. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** An option that passed validation: its normalised text and the (frozen) value read from it. */
export interface CheckedOption {
  readonly key: OptionKey;
  readonly text: string;
  readonly value: unknown;
}

export type OptionCheck = { ok: true; value: string; parsed: unknown } | { ok: false; message: string };

/** Reads one option's text without cross-option rules: for stored rows, which are already committed. */
export function readOptionText(key: OptionKey, text: string): OptionCheck {
  const spec = specOf(key);
  const parsed = spec.parse(text);
  if (!parsed.ok) return { ok: false, message: `${key} ${parsed.problem}` };
  return { ok: true, value: spec.format(parsed.value), parsed: deepFreeze(parsed.value) };
}

const defaults = new Map<OptionKey, unknown>();

/** The parsed default of an option, read once and shared. */
export function defaultOptionValue<K extends OptionKey>(key: K): OptionValue<K> {
  if (!defaults.has(key)) {
    const read = readOptionText(key, specOf(key).default);
    if (!read.ok) throw new Error(`the default of ${key} is invalid: ${read.message}`);
    defaults.set(key, read.parsed);
  }
  return defaults.get(key) as OptionValue<K>;
}

/** Reads every option at its default; the reader used when a caller has no current values. */
export const readDefaults: OptionReader = (key) => defaultOptionValue(key);

/** A rule between options, checked whenever one of its keys changes. */
interface OptionRule {
  readonly keys: readonly OptionKey[];
  /** Says what is wrong with the combined values, naming what to do about it. */
  check(read: OptionReader, changed: ReadonlySet<OptionKey>): string | undefined;
}

const isBlank = (value: unknown) =>
  typeof value === 'string' ? value.trim() === '' : Array.isArray(value) && value.length === 0;

/**
 * A switch that only works with other options set. Checked both ways, so a needed value cannot be cleared
 * while the switch is on either.
 */
function needs(flag: OptionKey, ...required: OptionKey[]): OptionRule {
  return {
    keys: [flag, ...required],
    check(read, changed) {
      if (read(flag) !== true) return undefined;
      const missing = required.find((key) => isBlank(read(key)));
      if (missing === undefined) return undefined;
      return changed.has(flag)
        ? `${flag} cannot be turned on until ${missing} is set`
        : `${missing} cannot be emptied while ${flag} is on; turn ${flag} off first`;
    },
  };
}

const rules: readonly OptionRule[] = [
  needs('GitHubOAuthEnabled', 'GitHubClientId'),
  needs('LinuxDOOAuthEnabled', 'LinuxDOClientId'),
  needs('WeChatAuthEnabled', 'WeChatServerAddress'),
  needs('TelegramOAuthEnabled', 'TelegramBotToken'),
  // Both keys: a human check that cannot verify answers would lock everyone out of sign-in.
  needs('TurnstileCheckEnabled', 'TurnstileSiteKey', 'TurnstileSecretKey'),
  needs('oidc.enabled', 'oidc.client_id'),
  needs('EmailDomainRestrictionEnabled', 'EmailDomainWhitelist'),
];

export type OptionsCheck = { ok: true; options: CheckedOption[] } | { ok: false; message: string };

/** Says a key is unknown, suggesting the known key that differs only in case. */
export function unknownOptionMessage(key: string): string {
  const lower = key.toLowerCase();
  const near = optionKeys.find((known) => known.toLowerCase() === lower);
  return near ? `${key} is not a known option; did you mean ${near}?` : `${key} is not a known option`;
}

/**
 * Validates and normalises several options as one change: each value on its own, then every cross-option rule
 * touching a changed key against the current values with all the changes applied. The first problem wins.
 * A key given twice takes its last value.
 */
export function validateOptions(
  entries: Iterable<readonly [key: string, text: string]>,
  read: OptionReader = readDefaults,
): OptionsCheck {
  const checked = new Map<OptionKey, CheckedOption>();
  for (const [key, text] of entries) {
    if (!isOptionKey(key)) return { ok: false, message: unknownOptionMessage(key) };
    const result = readOptionText(key, text);
    if (!result.ok) return result;
    checked.set(key, { key, text: result.value, value: result.parsed });
  }
  const changed = new Set(checked.keys());
  const readAfter: OptionReader = (key) =>
    checked.has(key) ? (checked.get(key)?.value as OptionValue<typeof key>) : read(key);
  for (const rule of rules) {
    if (!rule.keys.some((key) => changed.has(key))) continue;
    const message = rule.check(readAfter, changed);
    if (message) return { ok: false, message };
  }
  return { ok: true, options: [...checked.values()] };
}
