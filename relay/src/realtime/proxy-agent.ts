/**
 * The channel's outbound proxy (`setting.proxy`) for its realtime WebSocket, as every other upstream call of the
 * channel uses it (core/src/http/proxy-dispatcher.ts): an HTTP(S) proxy through a CONNECT tunnel, or SOCKS5.
 */
import type { Agent } from 'node:http';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';

/** The agent of a proxy URL; undefined for no proxy. A URL of another scheme was refused when the channel was saved. */
export function proxyAgentOf(proxy: string | undefined): Agent | undefined {
  if (!proxy) return undefined;
  const url = new URL(proxy);
  if (url.protocol === 'http:' || url.protocol === 'https:') return new HttpsProxyAgent(url);
  if (url.protocol === 'socks5:' || url.protocol === 'socks5h:') return new SocksProxyAgent(url);
  return undefined;
}
