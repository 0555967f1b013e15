/**
 * A channel's outbound proxy (`setting.proxy`: `http://`, `https://` or `socks5://`, credentials in the URL) as an
 * undici dispatcher: ProxyAgent (CONNECT for https targets, absolute-form forwarding for http) or Socks5ProxyAgent.
 * The relay keeps one per proxy URL with its pools; the console back end (fetch models, balances) keeps its own.
 */
import { type Agent, type Dispatcher, ProxyAgent, Socks5ProxyAgent } from 'undici';

export type ProxyPoolOptions = Omit<Agent.Options, 'factory'>;

/** Why a proxy setting cannot be used; the URL is not repeated (it may hold a password). */
export const INVALID_PROXY_MESSAGE = 'the channel proxy is not a valid http, https or socks5 URL';

/**
 * The dispatcher of a proxy URL, or undefined when the URL is not a supported proxy. Credentials are taken out of
 * the URL and handed over apart, so no message undici builds from the proxy's address can carry them.
 */
export function createProxyDispatcher(proxy: string, pool: ProxyPoolOptions = {}): Dispatcher | undefined {
  let url: URL;
  try {
    url = new URL(proxy);
  } catch {
    return undefined;
  }
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    return new ProxyAgent({
      ...pool,
      uri: url.href,
      ...(username !== ''
        ? { token: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` }
        : {}),
    });
  }
  if (url.protocol === 'socks5:' || url.protocol === 'socks5h:') {
    url.protocol = 'socks5:';
    return new Socks5ProxyAgent(url.href, {
      connections: pool.connections ?? null,
      ...(pool.connectTimeout !== undefined ? { connectTimeout: pool.connectTimeout } : {}),
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(username !== '' ? { username, password } : {}),
    });
  }
  return undefined;
}
