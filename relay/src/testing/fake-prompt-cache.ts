/**
 * A fake OpenAI chat upstream (https://platform.openai.com/docs/api-reference/chat/create, non-streaming) with
 * several API keys and a prompt cache per key, as a provider's cache works: a prompt whose leading messages this
 * key has already seen reports them as `usage.prompt_tokens_details.cached_tokens`; another key (or another
 * upstream) sees a cold cache. Each key can be told to answer as revoked (401) or rate limited (429).
 *
 * Tokens are counted as OpenAI's tokenizer would roughly: a quarter of the characters plus four per message.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type KeyBehaviour = 'ok' | 'revoked' | 'rate-limited' | 'no-quota';

export interface FakePromptCache {
  readonly url: string;
  /** Calls per key that got an answer (any status). */
  readonly calls: Map<string, number>;
  setKey(key: string, behaviour: KeyBehaviour): void;
  close(): Promise<void>;
}

interface Message {
  readonly role?: unknown;
  readonly content?: unknown;
}

const tokensOf = (message: Message): number =>
  4 +
  Math.ceil(
    (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '')).length /
      4,
  );

export async function startFakePromptCache(keys: Record<string, KeyBehaviour>): Promise<FakePromptCache> {
  const behaviour = new Map(Object.entries(keys));
  const calls = new Map<string, number>();
  /** key → hashes of every message prefix it has served. */
  const seen = new Map<string, Set<string>>();
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const mode = behaviour.get(key);
      if (mode === undefined || mode === 'revoked') {
        json(res, 401, {
          error: {
            message:
              'Incorrect API key provided: sk-****. You can find your API key at https://platform.openai.com.',
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        });
        return;
      }
      calls.set(key, (calls.get(key) ?? 0) + 1);
      if (mode === 'rate-limited') {
        json(
          res,
          429,
          {
            error: {
              message: 'Rate limit reached for requests',
              type: 'requests',
              param: null,
              code: 'rate_limit_exceeded',
            },
          },
          { 'retry-after': '30' },
        );
        return;
      }
      if (mode === 'no-quota') {
        json(res, 429, {
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        });
        return;
      }
      if (req.url !== '/v1/chat/completions') {
        json(res, 404, {
          error: { message: 'not found', type: 'invalid_request_error', param: null, code: null },
        });
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model?: string;
        messages?: Message[];
      };
      const messages = body.messages ?? [];
      const cache = seen.get(key) ?? new Set<string>();
      seen.set(key, cache);
      const hash = createHash('sha256');
      let prompt = 0;
      let cached = 0;
      let stillCached = true;
      for (const message of messages) {
        hash.update(JSON.stringify([message.role, message.content]));
        const prefix = hash.copy().digest('hex');
        prompt += tokensOf(message);
        if (stillCached && cache.has(prefix)) cached = prompt;
        else stillCached = false;
        cache.add(prefix);
      }
      json(res, 200, {
        id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'gpt-4o-mini',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Done.', refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: 2,
          total_tokens: prompt + 2,
          prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    setKey: (key, next) => behaviour.set(key, next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
