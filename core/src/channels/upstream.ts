import type { Dispatcher } from 'undici';
import { fetch as fetchThrough } from 'undici';
import { AppError } from '../errors.ts';
import { createProxyDispatcher, INVALID_PROXY_MESSAGE } from '../http/proxy-dispatcher.ts';
import { findProviderType } from '../providers/catalogue.ts';

export const UPSTREAM_TIMEOUT_MS = 10_000;

/** One call to another service: GET unless it says otherwise. */
export interface UpstreamCall {
  readonly method?: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string | URLSearchParams;
}

export interface UpstreamCallOptions {
  readonly timeoutMs?: number;
  /** Who answers, as messages name it ("GitHub"); default "the upstream". */
  readonly name?: string;
  /**
   * A 4xx answer's JSON is returned rather than failing: an OAuth token endpoint says why it refused a code in a
   * 400 body.
   */
  readonly refusalIsAnswer?: boolean;
  /** The channel's outbound proxy (`setting.proxy`); undefined: a direct connection. */
  readonly proxy?: string | undefined;
  /** Connects instead of a proxy: one that checks where it connects (an administrator's address, ADR 0039). */
  readonly dispatcher?: Dispatcher | undefined;
}

/** A channel's outbound proxy from its parsed `setting`, or undefined for a direct connection. */
export function settingProxy(setting: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const proxy = setting?.proxy;
  return typeof proxy === 'string' && proxy.trim() !== '' ? proxy.trim() : undefined;
}

/** A channel's outbound proxy from its stored `setting` text (unreadable text: none). */
export function channelProxy(settingText: string | null | undefined): string | undefined {
  if (!settingText) return undefined;
  try {
    const setting: unknown = JSON.parse(settingText);
    return typeof setting === 'object' && setting !== null && !Array.isArray(setting)
      ? settingProxy(setting as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The console back end's dispatchers, one per proxy URL (a channel's calls reuse its proxy's connections). */
const proxyDispatchers = new Map<string, Dispatcher>();

function proxyDispatcher(proxy: string): Dispatcher {
  let dispatcher = proxyDispatchers.get(proxy);
  if (dispatcher === undefined) {
    dispatcher = createProxyDispatcher(proxy);
    if (dispatcher === undefined) throw new AppError('UPSTREAM_FAILED', INVALID_PROXY_MESSAGE);
    proxyDispatchers.set(proxy, dispatcher);
  }
  return dispatcher;
}

/**
 * The one way the console back end talks to a provider (a channel's upstream, a sign-in provider): a call with a
 * timeout that answers parsed JSON. Failures become a clear 502 that names the status but never the key or the
 * response body.
 */
export async function callUpstreamJson(
  url: string,
  call: UpstreamCall,
  options: UpstreamCallOptions = {},
): Promise<unknown> {
  const name = options.name ?? 'the upstream';
  let response: Response;
  try {
    const init = {
      ...call,
      signal: AbortSignal.timeout(options.timeoutMs ?? UPSTREAM_TIMEOUT_MS),
      redirect: 'error' as const,
    };
    // Through a channel's proxy with undici's own fetch (the global one takes no dispatcher of this package).
    const dispatcher =
      options.dispatcher ?? (options.proxy === undefined ? undefined : proxyDispatcher(options.proxy));
    response =
      dispatcher === undefined
        ? await fetch(url, init)
        : ((await fetchThrough(url, { ...init, dispatcher })) as unknown as Response);
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
    throw new AppError(
      'UPSTREAM_FAILED',
      timedOut ? `${name} did not answer in time` : `${name} is unreachable`,
      { cause },
    );
  }
  const refusal = options.refusalIsAnswer === true && response.status >= 400 && response.status < 500;
  if (!response.ok && !refusal) {
    await response.body?.cancel();
    throw new AppError('UPSTREAM_FAILED', `${name} answered HTTP ${response.status}`);
  }
  try {
    return await response.json();
  } catch (cause) {
    throw new AppError('UPSTREAM_FAILED', `${name} answered something that is not JSON`, { cause });
  }
}

/** A GET of a channel's upstream (see {@link callUpstreamJson}), through its proxy when it has one. */
export const getUpstreamJson = (
  url: string,
  headers: Record<string, string>,
  {
    timeoutMs = UPSTREAM_TIMEOUT_MS,
    proxy,
    dispatcher,
  }: Pick<ChannelRoute, 'proxy' | 'dispatcher'> & { timeoutMs?: number } = {},
): Promise<unknown> => callUpstreamJson(url, { headers }, { timeoutMs, proxy, dispatcher });

/** How a channel's upstream is reached: its outbound proxy, if any; its `other` where it names an account. */
export interface ChannelRoute {
  readonly proxy?: string | undefined;
  /** A dispatcher that checks where it connects, for an address an administrator has not saved yet. */
  readonly dispatcher?: Dispatcher | undefined;
  /** The type's extra field (Cloudflare's account id). */
  readonly other?: string | undefined;
}

/** Where a channel's requests go: its own base URL or its type's default. */
export function channelBaseUrl(type: number, baseUrl: string): string {
  return (baseUrl || findProviderType(type)?.defaultBaseUrl || '').replace(/\/+$/, '');
}

/** An object's fields, or none when the value is not an object. */
export const asRecord = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The distinct non-empty `field` values of a list, or a clear failure when the list is missing. */
function idsOf(list: unknown, field: 'id' | 'name'): string[] {
  if (!Array.isArray(list)) throw new AppError('UPSTREAM_FAILED', 'the upstream model list has no models');
  return [
    ...new Set(
      list.map((m) => asRecord(m)[field]).filter((id): id is string => typeof id === 'string' && id !== ''),
    ),
  ];
}

/**
 * The upstream's model ids. OpenAI-style providers list at `{base}/v1/models`; Gemini's OpenAI-compatible list
 * is at `{base}/v1beta/openai/models` and names models as `models/<id>`; Anthropic's at `{base}/v1/models` with
 * its own key header and version (https://docs.anthropic.com/en/api/models-list).
 */
export async function fetchUpstreamModels(
  type: number,
  baseUrl: string,
  key: string,
  route: ChannelRoute = {},
): Promise<string[]> {
  const base = channelBaseUrl(type, baseUrl);
  if (!base) throw new AppError('VALIDATION_FAILED', 'this channel type needs a base_url to list models');
  const kind = findProviderType(type)?.modelList;
  const through = { proxy: route.proxy, dispatcher: route.dispatcher };
  if (kind === 'azure') {
    // https://learn.microsoft.com/en-us/rest/api/azureopenai/models/list: the models the resource can deploy.
    const body = asRecord(
      await getUpstreamJson(`${base}/openai/models?api-version=2024-10-21`, { 'api-key': key }, through),
    );
    return idsOf(body.data, 'id');
  }
  if (kind === 'cloudflare') {
    // https://developers.cloudflare.com/api/resources/ai/subresources/models/methods/list/: `{ result: [{ name }] }`.
    const account = route.other?.trim();
    if (!account)
      throw new AppError(
        'VALIDATION_FAILED',
        'Cloudflare lists models of an account: fill in the account id',
      );
    const body = asRecord(
      await getUpstreamJson(
        `${base}/client/v4/accounts/${encodeURIComponent(account)}/ai/models/search?per_page=1000`,
        { authorization: `Bearer ${key}` },
        through,
      ),
    );
    return idsOf(body.result, 'name');
  }
  if (kind === 'cohere') {
    // https://docs.cohere.com/reference/list-models: `{ models: [{ name, endpoints }] }`.
    const body = asRecord(
      await getUpstreamJson(`${base}/v1/models`, { authorization: `Bearer ${key}` }, through),
    );
    return idsOf(body.models, 'name');
  }
  const isGemini = kind === 'gemini';
  // DashScope lists its OpenAI-compatible models under its compatible mode.
  const url = isGemini
    ? `${base}/v1beta/openai/models`
    : kind === 'dashscope'
      ? `${base}/compatible-mode/v1/models`
      : `${base}/v1/models`;
  const headers: Record<string, string> =
    kind === 'anthropic'
      ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${key}` };
  const body = asRecord(await getUpstreamJson(url, headers, through));
  if (!Array.isArray(body.data)) throw new AppError('UPSTREAM_FAILED', 'the upstream model list has no data');
  const ids = body.data
    .map((m) => asRecord(m).id)
    .filter((id): id is string => typeof id === 'string' && id !== '')
    .map((id) => (isGemini ? id.replace(/^models\//, '') : id));
  return [...new Set(ids)];
}

const toNumber = (v: unknown): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) throw new AppError('UPSTREAM_FAILED', 'the upstream balance is not a number');
  return n;
};

const ymd = (d: Date) => d.toISOString().slice(0, 10);

/** The channel's remaining balance (USD; CNY for DeepSeek), or a clear 400 for types without a balance endpoint. */
export async function fetchUpstreamBalance(
  type: number,
  baseUrl: string,
  key: string,
  { now = new Date(), proxy }: { now?: Date } & ChannelRoute = {},
): Promise<number> {
  const provider = findProviderType(type);
  const base = channelBaseUrl(type, baseUrl);
  const auth = { authorization: `Bearer ${key}` };
  const get = (url: string) => getUpstreamJson(url, auth, { proxy });
  switch (provider?.balance) {
    case 'openai-billing': {
      const sub = asRecord(await get(`${base}/v1/dashboard/billing/subscription`));
      const start = new Date(now);
      if (sub.has_payment_method === true) start.setUTCDate(1);
      else start.setUTCDate(start.getUTCDate() - 100);
      const end = new Date(now);
      end.setUTCDate(end.getUTCDate() + 1);
      const usage = asRecord(
        await get(`${base}/v1/dashboard/billing/usage?start_date=${ymd(start)}&end_date=${ymd(end)}`),
      );
      return toNumber(sub.hard_limit_usd) - toNumber(usage.total_usage) / 100;
    }
    case 'siliconflow': {
      const info = asRecord(await get(`${base}/v1/user/info`));
      return toNumber(asRecord(info.data).totalBalance);
    }
    case 'deepseek': {
      const body = asRecord(await get(`${base}/user/balance`));
      const infos = Array.isArray(body.balance_infos) ? body.balance_infos.map(asRecord) : [];
      const cny = infos.find((i) => i.currency === 'CNY');
      if (!cny) throw new AppError('UPSTREAM_FAILED', 'the upstream reports no CNY balance');
      return toNumber(cny.total_balance);
    }
    default:
      throw new AppError(
        'BAD_REQUEST',
        `balance query is not supported for ${provider?.label ?? 'this channel type'}`,
      );
  }
}
