/**
 * Fake upstreams of the hosts whose answers differ from OpenAI's own in ways the relay must read:
 * - iFlytek Spark's HTTP API (https://www.xfyun.cn/doc/spark/HTTP%E8%B0%83%E7%94%A8%E6%96%87%E6%A1%A3.html):
 *   `/v1/chat/completions` (`lite`, `generalv3`, `pro-128k`, `generalv3.5`, `max-32k`, `4.0Ultra`) and
 *   `/v2/chat/completions` (`x1`), the APIPassword as a bearer; answers carry Spark's `code`, `message` and `sid`,
 *   stream lines are `data:{…}` (no space) ending `data: [DONE]`, the usage in the last chunk.
 * - Xinference's rerank (https://inference.readthedocs.io/en/latest/reference/): `/v1/rerank` answers `results`
 *   and `meta.tokens.{input_tokens,output_tokens}`.
 * - Model lists: DashScope's `/compatible-mode/v1/models` (OpenAI's list) and Cloudflare's
 *   `/client/v4/accounts/<account>/ai/models/search` (`{ success, result: [{ name, task }] }`), each with its bearer.
 * Every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const SPARK_REPLY = 'Hello from Spark.';

export interface HostRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface FakeHosts {
  readonly url: string;
  readonly requests: HostRequest[];
  close(): Promise<void>;
}

const SPARK_MODELS: Readonly<Record<string, readonly string[]>> = {
  '/v1/chat/completions': ['lite', 'generalv3', 'pro-128k', 'generalv3.5', 'max-32k', '4.0Ultra'],
  '/v2/chat/completions': ['x1'],
};

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startFakeHosts(options: {
  readonly sparkPassword: string;
  readonly xinferenceKey: string;
  readonly dashscopeKey: string;
  readonly cloudflare: { readonly token: string; readonly account: string };
}): Promise<FakeHosts> {
  const requests: HostRequest[] = [];
  const sockets = new Set<Socket>();

  function spark(req: IncomingMessage, res: ServerResponse, path: string, body: Record<string, unknown>) {
    if (req.headers.authorization !== `Bearer ${options.sparkPassword}`)
      return send(res, 401, {
        error: { message: 'HMAC signature cannot be verified', type: 'api_error', param: null, code: null },
      });
    const model = String(body.model ?? '');
    if (!SPARK_MODELS[path]?.includes(model))
      return send(res, 400, {
        error: {
          message: `invalid model ${model} for ${path}`,
          type: 'invalid_request_error',
          param: null,
          code: '10404',
        },
      });
    const messages = Array.isArray(body.messages) ? body.messages : [];
    // Spark answers its own errors inside a 200: a moderation refusal, a daily limit reached.
    const asked = JSON.stringify(messages);
    if (asked.includes('MODERATE-ME'))
      return send(res, 200, { code: 10013, message: 'input content audit failed', sid: 'cha000b0001@dx1' });
    if (asked.includes('DAILY-LIMIT'))
      return send(res, 200, {
        code: 11201,
        message: 'licc limit: daily limit exceeded',
        sid: 'cha000b0002@dx1',
      });
    const prompt = Math.max(1, Math.ceil(JSON.stringify(messages).length / 4));
    const usage = { prompt_tokens: prompt, completion_tokens: 5, total_tokens: prompt + 5 };
    const sid = 'cha000b000c@dx1905cf38fc8b86d552';
    if (body.stream !== true)
      return send(res, 200, {
        code: 0,
        message: 'Success',
        sid,
        choices: [{ message: { role: 'assistant', content: SPARK_REPLY }, index: 0 }],
        usage,
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // A stream refused after its start (output moderation): Spark's own error event, then the end.
    if (asked.includes('MODERATE-OUTPUT')) {
      res.write(
        `data:${JSON.stringify({ code: 0, message: 'Success', sid, choices: [{ delta: { role: 'assistant', content: 'Well' }, index: 0 }] })}\n\n`,
      );
      return void res.end(
        `data:${JSON.stringify({ code: 10014, message: 'output content audit failed', sid })}\n\n`,
      );
    }
    const created = 1719546385;
    const pieces = SPARK_REPLY.split(/(?<= )/);
    pieces.forEach((piece, index) => {
      const last = index === pieces.length - 1;
      const chunk = {
        code: 0,
        message: 'Success',
        sid,
        id: sid,
        created,
        choices: [{ delta: { role: 'assistant', content: piece }, index: 0 }],
        ...(last ? { usage } : {}),
      };
      res.write(`data:${JSON.stringify(chunk)}\n\n`);
    });
    res.end('data: [DONE]\n\n');
  }

  function xinferenceRerank(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    if (req.headers.authorization !== `Bearer ${options.xinferenceKey}`)
      return send(res, 401, { detail: 'Invalid credential' });
    const documents = Array.isArray(body.documents) ? body.documents.map(String) : [];
    if (typeof body.query !== 'string' || documents.length === 0)
      return send(res, 400, { detail: 'query and documents are required' });
    const tokens = Math.ceil([body.query, ...documents].join(' ').length / 4);
    const ranked = documents
      .map((text, index) => ({ index, relevance_score: 1 / (index + 2), document: { text } }))
      .slice(0, typeof body.top_n === 'number' ? body.top_n : documents.length);
    return send(res, 200, {
      id: '480dca92-8910-11ef-b8f8-0242ac110002',
      results: ranked.map((r) => (body.return_documents === true ? r : { ...r, document: null })),
      meta: {
        api_version: null,
        billed_units: null,
        tokens: { input_tokens: tokens, output_tokens: 0 },
        warnings: null,
      },
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {}
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      requests.push({ path, headers: req.headers, body });
      if (path.startsWith('/spark/')) return spark(req, res, path.slice('/spark'.length), body);
      if (path === '/xinference/v1/rerank') return xinferenceRerank(req, res, body);
      if (path === '/dashscope/compatible-mode/v1/models') {
        if (req.headers.authorization !== `Bearer ${options.dashscopeKey}`)
          return send(res, 401, {
            error: { message: 'Incorrect API key provided.', code: 'invalid_api_key' },
          });
        return send(res, 200, {
          object: 'list',
          data: ['qwen-plus', 'qwen-max', 'text-embedding-v3'].map((id) => ({
            id,
            object: 'model',
            owned_by: 'system',
          })),
        });
      }
      if (path === `/cloudflare/client/v4/accounts/${options.cloudflare.account}/ai/models/search`) {
        if (req.headers.authorization !== `Bearer ${options.cloudflare.token}`)
          return send(res, 403, {
            success: false,
            errors: [{ code: 10000, message: 'Authentication error' }],
            result: null,
          });
        return send(res, 200, {
          success: true,
          errors: [],
          messages: [],
          result: [
            { id: 'f4e4...', name: '@cf/meta/llama-3.1-8b-instruct', task: { name: 'Text Generation' } },
            { id: '429b...', name: '@cf/baai/bge-base-en-v1.5', task: { name: 'Text Embeddings' } },
          ],
        });
      }
      return send(res, 404, { error: { message: 'not found' } });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
