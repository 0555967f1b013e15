/**
 * Zhipu with its legacy `id.secret` key (https://open.bigmodel.cn/dev/api/http-call/http-auth): the key is signed
 * into a short-lived HS256 JWT (`{"alg":"HS256","sign_type":"SIGN"}`, claims `api_key`, `exp` and `timestamp` in
 * milliseconds) sent as the bearer token of the v4 API (`/api/paas/v4`, OpenAI's format; the v3 `model-api`
 * paths are retired). A token is kept until a minute before it expires.
 */

import { createHmac } from 'node:crypto';
import type { ChannelView } from '../../contract.ts';
import { openAiFormat } from '../../formats/openai/format.ts';
import { baseUrlOf, callOf, credentialFailure, type Provider } from '../provider.ts';

const LIFETIME_MS = 30 * 60_000;
const RENEW_BEFORE_MS = 60_000;

const PATHS = { chat: '/api/paas/v4/chat/completions', embeddings: '/api/paas/v4/embeddings' } as const;

const tokens = new Map<string, { token: string; renewAt: number }>();

/** The signed token of an `id.secret` key at `now` (milliseconds). */
export function zhipuToken(key: string, now: number): string | undefined {
  const dot = key.indexOf('.');
  if (dot <= 0 || dot === key.length - 1) return undefined;
  const id = key.slice(0, dot);
  const secret = key.slice(dot + 1);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', sign_type: 'SIGN' })}.${encode({ api_key: id, exp: now + LIFETIME_MS, timestamp: now })}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

function tokenOf(channel: ChannelView): string {
  const key = channel.key ?? '';
  const now = Date.now();
  const cached = tokens.get(key);
  if (cached && now < cached.renewAt) return cached.token;
  const token = zhipuToken(key, now);
  if (!token) throw credentialFailure('the Zhipu key must be id.secret');
  if (tokens.size > 1000) tokens.clear();
  tokens.set(key, { token, renewAt: now + LIFETIME_MS - RENEW_BEFORE_MS });
  return token;
}

export const zhipuLegacyProvider: Provider = {
  id: 'zhipu-legacy',
  format: openAiFormat,
  genAiName: 'zhipu',
  supports: (endpoint) => endpoint in PATHS,
  retriesBadRequest: false,
  buildRequest(channel, input) {
    const path = PATHS[input.endpoint as keyof typeof PATHS];
    const written = openAiFormat.writeRequest(channel, input);
    return callOf(
      written,
      `${baseUrlOf(channel)}${path}`,
      { authorization: `Bearer ${tokenOf(channel)}` },
      channel,
    );
  },
  readError: (status, body) => openAiFormat.readError(status, body),
};
