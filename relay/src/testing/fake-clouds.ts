/**
 * Fake cloud front doors for tests: Azure OpenAI, Vertex AI and AWS Bedrock as their API references describe their
 * URLs, credentials and framing, in front of the fake model upstreams (fake-openai.ts, fake-providers.ts) that speak
 * the wire formats. Each checks the credential the way the provider does:
 * - Azure (https://learn.microsoft.com/en-us/azure/ai-services/openai/reference): `api-key`, `api-version`, the
 *   deployment in the path; a prompt with `FILTER-ME` is refused by the content filter (400 `content_filter`).
 * - Vertex AI (https://cloud.google.com/vertex-ai/docs/reference/rest): `POST /token` takes the service account's
 *   RS256 JWT (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`), checks its signature with the account's
 *   public key, its `iss`, `aud`, `scope` and times, and issues an access token; the model calls want it as a bearer.
 * - Bedrock (https://docs.aws.amazon.com/bedrock/latest/APIReference/): SigV4 (recomputed from the secret key it
 *   knows by testing/sigv4.ts, an implementation of its own checked against AWS's published suite) or a Bedrock API key as a bearer; InvokeModel and
 *   invoke-with-response-stream (the `application/vnd.amazon.eventstream` binary framing, written by
 *   testing/event-stream.ts, not by the codec the relay reads it with), errors with
 *   `x-amzn-ErrorType`.
 * Every request is recorded.
 */

import {
  createHmac,
  createPublicKey,
  createVerify,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isRecord } from '@turnpike/core/json';
import { encodeEvent } from './event-stream.ts';
import { authorizationOf } from './sigv4.ts';

export interface CloudRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface FakeCloudOptions {
  /** The OpenAI-format upstream behind Azure. */
  readonly openAiUrl: string;
  /** The Anthropic and Gemini upstream behind Vertex and Bedrock. */
  readonly providersUrl: string;
  readonly azureKey: string;
  /** The Vertex service account: its email and its public key. */
  readonly vertexAccount?: { readonly email: string; readonly publicKeyPem: string };
  /**
   * A recorded Vertex exchange (providers/vertex/__fixtures__): calls of its model are answered with its answer, or
   * its stream events in Vertex's SSE framing, instead of the model upstream's.
   */
  readonly vertexReplay?: {
    readonly model: string;
    readonly answer: unknown;
    readonly stream: readonly unknown[];
    readonly separator: string;
  };
  /**
   * OpenAI-compatible hosts with paths of their own: a request under `prefix` with `Bearer <key>` goes to the
   * OpenAI-format upstream's `/v1/<rest>` (`text/chatcompletion_v2`, MiniMax's chat, to `chat/completions`).
   */
  readonly compatible?: readonly { readonly prefix: string; readonly key: string }[];
  /**
   * Zhipu's v4 API with a legacy `id.secret` key: `/zhipu-jwt/api/paas/v4/...` wants the HS256 JWT of that key
   * (header `sign_type: SIGN`, `api_key` = the id, `exp` in milliseconds, not past), checked with the secret.
   */
  readonly zhipuKey?: string;
  /** Baidu's `APIKey|SecretKey`: `/baidu/oauth/2.0/token` exchanges it, Wenxin's chat wants the token. */
  readonly baiduKey?: string;
  /** Cohere's API key: `/cohere/v2/chat`, `/cohere/compatibility/v1/embeddings`, `/cohere/v1/rerank`. */
  readonly cohereKey?: string;
  /** A Dify app's API key: `/dify/v1/chat-messages` answers as the reference shows, blocking or streaming. */
  readonly difyKey?: string;
  /** Bedrock's credentials: the access key pair and the region, and a Bedrock API key. */
  readonly aws?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly region: string;
    readonly apiKey: string;
  };
}

export interface FakeClouds {
  readonly url: string;
  readonly requests: CloudRequest[];
  /** Access tokens issued by the Vertex token endpoint. */
  readonly tokensIssued: () => number;
  /** Access tokens issued by Baidu's token endpoint. */
  readonly baiduTokensIssued: () => number;
  /** Answer the next model calls with this error (status, Azure's/AWS's error type), until cleared. */
  setFault(fault: { status: number; awsType?: string; retryAfter?: string } | undefined): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
};

/** Sends `body` to the model upstream and streams its answer back unchanged. */
async function forward(res: ServerResponse, url: string, headers: Record<string, string>, body: unknown) {
  const answer = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
  res.end(Buffer.from(await answer.arrayBuffer()));
}

const base64url = (text: string) => Buffer.from(text, 'base64url').toString('utf8');

/** Verifies a service account's RS256 JWT the way Google's token endpoint does; the problem, or undefined. */
function jwtProblem(assertion: string, key: KeyObject, email: string, audience: string): string | undefined {
  const [head, claims, signature] = assertion.split('.');
  if (!head || !claims || !signature) return 'malformed JWT';
  const header = JSON.parse(base64url(head)) as Record<string, unknown>;
  if (header.alg !== 'RS256') return 'alg must be RS256';
  const verify = createVerify('RSA-SHA256');
  verify.update(`${head}.${claims}`);
  if (!verify.verify(key, Buffer.from(signature, 'base64url'))) return 'invalid JWT signature';
  const c = JSON.parse(base64url(claims)) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  if (c.iss !== email) return 'wrong issuer';
  if (c.aud !== audience) return 'wrong audience';
  if (typeof c.scope !== 'string' || !c.scope.includes('https://www.googleapis.com/auth/cloud-platform'))
    return 'missing scope';
  if (typeof c.iat !== 'number' || typeof c.exp !== 'number' || c.iat > now + 60 || c.exp < now)
    return 'JWT expired or not yet valid';
  if (c.exp - c.iat > 3600) return 'JWT lifetime over one hour';
  return undefined;
}

export async function startFakeClouds(options: FakeCloudOptions): Promise<FakeClouds> {
  const requests: CloudRequest[] = [];
  const sockets = new Set<Socket>();
  const accessTokens = new Set<string>();
  let fault: { status: number; awsType?: string; retryAfter?: string } | undefined;
  let url = '';
  const vertexKey = options.vertexAccount ? createPublicKey(options.vertexAccount.publicKeyPem) : undefined;

  async function azure(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ) {
    if (req.headers['api-key'] !== options.azureKey)
      return json(res, 401, {
        error: {
          code: '401',
          message:
            'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        },
      });
    if (!query.get('api-version'))
      return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
    if (req.method === 'GET' && path === '/openai/models')
      return json(res, 200, {
        data: [
          { id: 'gpt-4o', status: 'succeeded', capabilities: { chat_completion: true }, object: 'model' },
          {
            id: 'text-embedding-3-small',
            status: 'succeeded',
            capabilities: { embeddings: true },
            object: 'model',
          },
        ],
        object: 'list',
      });
    if (fault)
      return json(
        res,
        fault.status,
        {
          error: {
            code: String(fault.status),
            message:
              'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current tier.',
          },
        },
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    if (JSON.stringify(body).includes('FILTER-ME'))
      return json(res, 400, {
        error: {
          message:
            "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
          type: null,
          param: 'prompt',
          code: 'content_filter',
          status: 400,
          innererror: {
            code: 'ResponsibleAIPolicyViolation',
            content_filter_result: {
              hate: { filtered: false, severity: 'safe' },
              self_harm: { filtered: false, severity: 'safe' },
              sexual: { filtered: false, severity: 'safe' },
              violence: { filtered: true, severity: 'high' },
            },
          },
        },
      });
    // The Responses API: no deployment in the path (it is the body's model), a preview version from 2025-03-01 on.
    if (path === '/openai/responses') {
      const version = query.get('api-version') ?? '';
      if (!/^20\d\d-\d\d-\d\d-preview$/.test(version) || version < '2025-03-01-preview')
        return json(res, 400, {
          error: { code: 'BadRequest', message: `API version ${version} does not support the Responses API` },
        });
      return forward(
        res,
        `${options.openAiUrl}/v1/responses`,
        { 'content-type': 'application/json', authorization: 'Bearer sk-azure-inner' },
        body,
      );
    }
    const deployment = /^\/openai\/deployments\/([^/]+)\/(.+)$/.exec(path);
    if (!deployment) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
    const [, name, rest] = deployment;
    return forward(
      res,
      `${options.openAiUrl}/v1/${rest}`,
      { 'content-type': 'application/json', authorization: 'Bearer sk-azure-inner' },
      { ...body, model: decodeURIComponent(name ?? '') },
    );
  }

  async function compatible(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    key: string,
    body: Record<string, unknown>,
  ) {
    if (req.headers.authorization !== `Bearer ${key}`)
      return json(res, 401, {
        error: { message: 'invalid api key', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
    const tail = rest.endsWith('chatcompletion_v2') ? 'chat/completions' : rest;
    if (!['chat/completions', 'embeddings', 'images/generations'].includes(tail))
      return json(res, 404, { error: { message: `no such path ${rest}` } });
    return forward(
      res,
      `${options.openAiUrl}/v1/${tail}`,
      { 'content-type': 'application/json', authorization: 'Bearer sk-inner' },
      body,
    );
  }

  async function zhipuJwt(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    body: Record<string, unknown>,
  ) {
    const refuse = (message: string) => json(res, 401, { error: { code: '1000', message } });
    const [id, secret] = (options.zhipuKey ?? '.').split('.') as [string, string];
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const [head, claims, signature] = token.split('.');
    if (!head || !claims || !signature) return refuse('身份验证失败。');
    const header = JSON.parse(base64url(head)) as Record<string, unknown>;
    if (header.alg !== 'HS256' || header.sign_type !== 'SIGN')
      return refuse('Authorization Token非法，请确认Authorization Token正确传递。');
    const expected = createHmac('sha256', secret).update(`${head}.${claims}`).digest('base64url');
    if (expected !== signature) return refuse('Authorization Token非法，请确认Authorization Token正确传递。');
    const c = JSON.parse(base64url(claims)) as Record<string, unknown>;
    if (c.api_key !== id || typeof c.exp !== 'number' || c.exp < Date.now())
      return refuse('Authorization Token已过期。');
    return forward(
      res,
      `${options.openAiUrl}/v1/${rest}`,
      { 'content-type': 'application/json', authorization: 'Bearer sk-inner' },
      body,
    );
  }

  const baiduTokens = new Set<string>();
  async function baidu(
    res: ServerResponse,
    rest: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ) {
    const [apiKey, secretKey] = (options.baiduKey ?? '|').split('|');
    if (rest === '/oauth/2.0/token') {
      if (
        query.get('grant_type') !== 'client_credentials' ||
        query.get('client_id') !== apiKey ||
        query.get('client_secret') !== secretKey
      )
        return json(res, 401, { error: 'invalid_client', error_description: 'unknown client id' });
      const token = `24.${randomBytes(16).toString('hex')}.2592000.1700000000.282335-12345678`;
      baiduTokens.add(token);
      return json(res, 200, {
        refresh_token: '25.x',
        expires_in: 2592000,
        scope: 'public wenxinworkshop_corp_api',
        access_token: token,
      });
    }
    const chat = /^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/chat\/([\w.-]+)$/.exec(rest);
    if (!chat) return json(res, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
    if (!baiduTokens.has(query.get('access_token') ?? ''))
      return json(res, 200, { error_code: 110, error_msg: 'Access token invalid or no longer valid' });
    // Errors Wenxin answers inside a 200 (its error codes), asked for by the endpoint's name.
    const inBody = WENXIN_ERRORS[chat[1] ?? ''];
    if (inBody) return json(res, 200, { ...inBody, id: 'as-err' });
    const messages = Array.isArray(body.messages) ? body.messages : [];
    if (
      messages.length === 0 ||
      messages.some((m) => !isRecord(m) || (m.role !== 'user' && m.role !== 'assistant'))
    )
      return json(res, 200, {
        error_code: 336003,
        error_msg: 'the role of messages must be user or assistant',
      });
    const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
    const base = {
      id: 'as-fg2xp9wnmm',
      object: 'chat.completion',
      created: 1693811110,
      is_truncated: false,
      need_clear_history: false,
    };
    if (body.stream !== true)
      return json(res, 200, { ...base, result: WENXIN_REPLY, finish_reason: 'normal', usage });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pieces = WENXIN_REPLY.split(/(?<= )/);
    pieces.forEach((piece, index) => {
      const end = index === pieces.length - 1;
      res.write(
        `data: ${JSON.stringify({ ...base, object: 'chat.completion', sentence_id: index, is_end: end, result: piece, ...(end ? { finish_reason: 'normal' } : {}), usage })}\n\n`,
      );
    });
    res.end();
  }

  async function cohere(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    body: Record<string, unknown>,
  ) {
    if (req.headers.authorization !== `Bearer ${options.cohereKey}`)
      return json(res, 401, { id: 'e1', message: 'invalid api token' });
    if (req.method === 'GET' && rest === '/v1/models')
      return json(res, 200, {
        models: [
          { name: 'command-r-plus', endpoints: ['generate', 'chat', 'summarize'], context_length: 128000 },
          { name: 'embed-english-v3.0', endpoints: ['embed'], context_length: 512 },
        ],
      });
    if (rest === '/compatibility/v1/embeddings' || rest === '/v1/rerank')
      return forward(
        res,
        `${options.openAiUrl}/v1/${rest.endsWith('rerank') ? 'rerank' : 'embeddings'}`,
        { 'content-type': 'application/json', authorization: 'Bearer sk-inner' },
        body,
      );
    if (rest !== '/v2/chat') return json(res, 404, { message: 'not found' });
    const messages = Array.isArray(body.messages) ? body.messages : [];
    if (typeof body.model !== 'string' || messages.length === 0 || 'top_p' in body || 'stop' in body)
      return json(res, 400, {
        id: 'e2',
        message: 'invalid request: model and messages are required; p and stop_sequences, not top_p and stop',
      });
    const input = Math.max(1, Math.ceil(JSON.stringify(messages).length / 4));
    const usage = {
      billed_units: { input_tokens: input, output_tokens: 5 },
      tokens: { input_tokens: input + 2, output_tokens: 5 },
    };
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const answered = messages.some((m) => isRecord(m) && m.role === 'tool');
    const tool =
      tools.length > 0 && !answered && isRecord(tools[0]) && isRecord(tools[0].function)
        ? String(tools[0].function.name)
        : undefined;
    const call = tool && {
      id: 'get_weather_k5ebpzt8g3mr',
      type: 'function',
      function: { name: tool, arguments: '{"city":"Paris"}' },
    };
    if (body.stream !== true)
      return json(res, 200, {
        id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
        finish_reason: call ? 'TOOL_CALL' : 'COMPLETE',
        message: call
          ? { role: 'assistant', tool_plan: 'I will look up the weather.', tool_calls: [call] }
          : { role: 'assistant', content: [{ type: 'text', text: COHERE_REPLY }] },
        usage,
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (type: string, event: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...event })}\n\n`);
    send('message-start', {
      id: 'c14c80c3',
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    });
    if (call) {
      send('tool-plan-delta', { delta: { message: { tool_plan: 'I will look up the weather.' } } });
      send('tool-call-start', {
        index: 0,
        delta: { message: { tool_calls: { ...call, function: { name: tool, arguments: '' } } } },
      });
      send('tool-call-delta', {
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } },
      });
      send('tool-call-delta', {
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } },
      });
      send('tool-call-end', { index: 0 });
    } else {
      send('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
      for (const word of COHERE_REPLY.split(/(?<= )/))
        send('content-delta', { index: 0, delta: { message: { content: { text: word } } } });
      send('content-end', { index: 0 });
    }
    send('message-end', { delta: { finish_reason: call ? 'TOOL_CALL' : 'COMPLETE', usage } });
    res.end();
  }

  async function dify(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    if (req.headers.authorization !== `Bearer ${options.difyKey}`)
      return json(res, 401, { code: 'unauthorized', message: 'Access token is invalid', status: 401 });
    if (
      typeof body.query !== 'string' ||
      body.query === '' ||
      typeof body.user !== 'string' ||
      !isRecord(body.inputs)
    )
      return json(res, 400, {
        code: 'invalid_param',
        message: 'query, inputs and user are required',
        status: 400,
      });
    const usage = {
      prompt_tokens: Math.max(1, Math.ceil(body.query.length / 4)),
      completion_tokens: 6,
      total_tokens: Math.max(1, Math.ceil(body.query.length / 4)) + 6,
      total_price: '0.0000240',
      currency: 'USD',
      latency: 0.61,
    };
    const ids = {
      message_id: '9da23599-e713-473b-982c-4328d4f5c78a',
      conversation_id: '45701982-8118-4bc5-8e9b-64562b4555f2',
    };
    if (body.response_mode === 'blocking')
      return json(res, 200, {
        event: 'message',
        task_id: 'c3800678-a077-43df-a102-53f23ed20b88',
        id: ids.message_id,
        ...ids,
        mode: 'chat',
        answer: DIFY_REPLY,
        metadata: { usage, retriever_resources: [] },
        created_at: 1705407629,
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (event: Record<string, unknown>) => res.write(`data: ${JSON.stringify(event)}\n\n`);
    send({ event: 'workflow_started', task_id: 't', workflow_run_id: 'w', data: {} });
    send({ event: 'agent_thought', ...ids, thought: 'Answering directly.', position: 1 });
    for (const word of DIFY_REPLY.split(/(?<= )/))
      send({ event: 'message', ...ids, answer: word, created_at: 1705407629 });
    res.write('event: ping\n\n');
    send({ event: 'message_end', ...ids, metadata: { usage, retriever_resources: [] } });
    res.end();
  }

  async function vertexToken(res: ServerResponse, raw: string) {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return json(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    const problem =
      vertexKey && options.vertexAccount
        ? jwtProblem(form.get('assertion') ?? '', vertexKey, options.vertexAccount.email, `${url}/token`)
        : 'no service account';
    if (problem) return json(res, 400, { error: 'invalid_grant', error_description: problem });
    const token = `ya29.${randomBytes(24).toString('base64url')}`;
    accessTokens.add(token);
    return json(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
  }

  async function vertex(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ) {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!accessTokens.has(token))
      return json(res, 401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.',
          status: 'UNAUTHENTICATED',
        },
      });
    if (fault)
      return json(res, fault.status, {
        error: {
          code: fault.status,
          message: 'Resource exhausted, please try again later.',
          status: 'RESOURCE_EXHAUSTED',
        },
      });
    const call =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^:]+):(\w+)$/.exec(
        path,
      );
    if (!call) return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    const [, , , publisher, model, action] = call;
    const replay = options.vertexReplay;
    if (publisher === 'google' && replay && model === replay.model) {
      if (action === 'generateContent') return json(res, 200, replay.answer);
      if (action === 'streamGenerateContent' && query.get('alt') === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const event of replay.stream) res.write(`data: ${JSON.stringify(event)}${replay.separator}`);
        return void res.end();
      }
    }
    if (publisher === 'google' && action === 'predict') {
      const instances = Array.isArray(body.instances) ? body.instances : [];
      if (instances.length === 0 || !instances.every((i) => isRecord(i) && typeof i.content === 'string'))
        return json(res, 400, {
          error: { code: 400, message: 'instances[].content is required', status: 'INVALID_ARGUMENT' },
        });
      const parameters = isRecord(body.parameters) ? body.parameters : {};
      const dimensions =
        typeof parameters.outputDimensionality === 'number' ? parameters.outputDimensionality : 768;
      return json(res, 200, {
        predictions: instances.map((instance) => {
          const content = String((instance as Record<string, unknown>).content);
          return {
            embeddings: {
              statistics: { truncated: false, token_count: Math.max(1, Math.ceil(content.length / 4)) },
              values: fakeVector(content, dimensions),
            },
          };
        }),
        metadata: { billableCharacterCount: instances.length },
      });
    }
    if (publisher === 'google') {
      const search = query.toString();
      return forward(
        res,
        `${options.providersUrl}/v1beta/models/${model}:${action}${search ? `?${search}` : ''}`,
        { 'content-type': 'application/json' },
        body,
      );
    }
    if (body.anthropic_version !== 'vertex-2023-10-16' || 'model' in body)
      return json(res, 400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'anthropic_version must be vertex-2023-10-16 and the model is in the path',
        },
      });
    const stream = action === 'streamRawPredict';
    const { anthropic_version: _version, ...rest } = body;
    return forward(
      res,
      `${options.providersUrl}/v1/messages`,
      { 'content-type': 'application/json', 'x-api-key': 'inner', 'anthropic-version': '2023-06-01' },
      { ...rest, model, ...(stream ? { stream: true } : {}) },
    );
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = raw === '' ? {} : JSON.parse(raw);
        if (isRecord(parsed)) body = parsed;
      } catch {
        body = {};
      }
      const parsedUrl = new URL(req.url ?? '/', 'http://fake');
      const path = parsedUrl.pathname;
      const query = parsedUrl.searchParams;
      requests.push({ method: req.method ?? 'GET', path, query, headers: req.headers, body });
      // The longest prefix wins; Vertex's project paths are never a compatible host's.
      const host = path.startsWith('/v1/projects/')
        ? undefined
        : [...(options.compatible ?? [])]
            .sort((a, b) => b.prefix.length - a.prefix.length)
            .find((entry) => path.startsWith(`${entry.prefix}/`));
      const handled = path.startsWith('/baidu/')
        ? baidu(res, path.slice('/baidu'.length), query, body)
        : path.startsWith('/cohere/')
          ? cohere(req, res, path.slice('/cohere'.length), body)
          : path === '/dify/v1/chat-messages'
            ? dify(req, res, body)
            : path.startsWith('/zhipu-jwt/')
              ? zhipuJwt(req, res, path.slice('/zhipu-jwt/api/paas/v4/'.length), body)
              : host
                ? compatible(req, res, path.slice(host.prefix.length + 1), host.key, body)
                : path.startsWith('/openai/')
                  ? azure(req, res, path, query, body)
                  : path === '/token'
                    ? vertexToken(res, raw)
                    : path.startsWith('/v1/projects/')
                      ? vertex(req, res, path, query, body)
                      : path.startsWith('/model/')
                        ? bedrock(req, res, path, raw, body)
                        : json(res, 404, { error: 'not found' });
      void Promise.resolve(handled).catch(() => res.destroy());
    });
  });

  async function bedrock(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    raw: string,
    body: Record<string, unknown>,
  ) {
    return bedrockCall({ req, res, path, raw, body, options, fault, providersUrl: options.providersUrl });
  }

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    tokensIssued: () => accessTokens.size,
    baiduTokensIssued: () => baiduTokens.size,
    setFault(next) {
      fault = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The SigV4 problem of a request, or undefined: recomputed from the secret key the fake knows with testing/sigv4.ts
 * (written from AWS's description and held to AWS's published suite), not with the signer the relay signs with.
 */
async function sigV4Problem(
  req: IncomingMessage,
  path: string,
  raw: string,
  aws: NonNullable<FakeCloudOptions['aws']>,
): Promise<string | undefined> {
  const authorization = String(req.headers.authorization ?? '');
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!parsed) return 'Authorization header requires Credential, SignedHeaders and Signature';
  const [, accessKeyId, , region, service, signedHeaderList, signature] = parsed;
  if (accessKeyId !== aws.accessKeyId) return 'The security token included in the request is invalid.';
  if (region !== aws.region || service !== 'bedrock')
    return `Credential should be scoped to a valid region (${region}/${service})`;
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) return 'missing x-amz-date';
  const signingDate = new Date(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`);
  if (Math.abs(Date.now() - signingDate.getTime()) > 5 * 60_000) return 'Signature expired';
  const headers: Record<string, string> = {};
  for (const name of (signedHeaderList ?? '').split(';')) headers[name] = String(req.headers[name] ?? '');
  const query = (req.url ?? '').split('?')[1] ?? '';
  const expected = authorizationOf(
    {
      accessKeyId: aws.accessKeyId,
      secretAccessKey: aws.secretAccessKey,
      region: aws.region,
      service: 'bedrock',
    },
    amzDate,
    { method: req.method ?? 'POST', path, query, headers, body: raw },
  );
  const recomputed = /Signature=([0-9a-f]{64})/.exec(expected)?.[1];
  return recomputed === signature
    ? undefined
    : 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.';
}

const awsError = (res: ServerResponse, status: number, type: string, message: string) => {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': randomBytes(8).toString('hex'),
  });
  res.end(JSON.stringify({ message }));
};

/** One Bedrock stream message: a `chunk` event carrying the model's event as base64 `bytes`. */
/** AWS's documented example access key pair (its IAM user guide), in the region the fake Bedrock answers for. */
export const EXAMPLE_AWS_ACCOUNT = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-west-2',
};

/**
 * A new Vertex service account: the email and public key the fake front door checks its JWTs with, and the key file
 * a channel holds, naming the fake's token endpoint.
 */
export function newVertexAccount(email = 'relay@turnpike-test.iam.gserviceaccount.com') {
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    email,
    publicKeyPem: keys.publicKey,
    keyFile: (tokenUri: string) =>
      JSON.stringify({
        type: 'service_account',
        project_id: 'turnpike-test',
        private_key_id: 'k1',
        private_key: keys.privateKey,
        client_email: email,
        token_uri: tokenUri,
      }),
  };
}

export const bedrockChunk = (event: unknown): Uint8Array =>
  encodeEvent('chunk', JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));

/** The reply of the fake Wenxin models. */
export const WENXIN_REPLY = 'Hello from Wenxin.';

/** Wenxin endpoints of the fake that answer a 200 holding an error: rate limited, no permission, a bad request. */
const WENXIN_ERRORS: Readonly<Record<string, { error_code: number; error_msg: string }>> = {
  'ernie-qps-limit': { error_code: 18, error_msg: 'Open api qps request limit reached' },
  'ernie-no-permission': { error_code: 6, error_msg: 'No permission to access data' },
  'ernie-bad-request': { error_code: 336003, error_msg: 'the role of messages must be user or assistant' },
};

/** The reply of the fake Cohere chat models. */
export const COHERE_REPLY = 'Hello from Cohere.';

/** The reply of the fake Dify app. */
export const DIFY_REPLY = 'Hello from the Dify app.';

/** The reply of the fake Converse models. */
export const CONVERSE_REPLY = 'Hello from Bedrock Converse.';

/** One ConverseStream message: the event's type as `:event-type`, its JSON as the payload. */
export const converseEvent = (type: string, payload: unknown): Uint8Array =>
  encodeEvent(type, JSON.stringify(payload));

/** Converse and ConverseStream as the reference shows them: text blocks, stop reason, usage last. */
function converseCall(res: ServerResponse, modelId: string, stream: boolean, body: Record<string, unknown>) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const wellFormed =
    messages.length > 0 &&
    messages.every(
      (m) => isRecord(m) && (m.role === 'user' || m.role === 'assistant') && Array.isArray(m.content),
    ) &&
    !('model' in body);
  if (!wellFormed)
    return awsError(res, 400, 'ValidationException', 'Malformed input request: messages of content blocks');
  const inputTokens = Math.max(1, Math.ceil(JSON.stringify(body).length / 4));
  const usage = { inputTokens, outputTokens: 7, totalTokens: inputTokens + 7 };
  if (!stream)
    return json(res, 200, {
      output: { message: { role: 'assistant', content: [{ text: CONVERSE_REPLY }] } },
      stopReason: 'end_turn',
      usage,
      metrics: { latencyMs: 12 },
    });
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-requestid': `r-${modelId}`,
  });
  res.write(converseEvent('messageStart', { role: 'assistant' }));
  for (const word of CONVERSE_REPLY.split(/(?<= )/))
    res.write(converseEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: word } }));
  res.write(converseEvent('contentBlockStop', { contentBlockIndex: 0 }));
  res.write(converseEvent('messageStop', { stopReason: 'end_turn' }));
  res.end(converseEvent('metadata', { usage, metrics: { latencyMs: 12 } }));
}

/** A fake embedding of a text: `dimensions` numbers read from its characters, so each text has its own. */
export function fakeVector(text: string, dimensions: number): number[] {
  return Array.from(
    { length: dimensions },
    (_, i) => ((text.charCodeAt(i % Math.max(1, text.length)) || 1) % 97) / 97,
  );
}

/** Titan Text Embeddings and Cohere Embed through InvokeModel, in their bodies (the header counts the tokens). */
function bedrockEmbeddings(res: ServerResponse, modelId: string, body: Record<string, unknown>) {
  if (modelId.startsWith('amazon.')) {
    const keys = Object.keys(body).filter(
      (k) => !['inputText', 'dimensions', 'normalize', 'embeddingTypes'].includes(k),
    );
    if (typeof body.inputText !== 'string' || body.inputText === '' || keys.length > 0)
      return awsError(
        res,
        400,
        'ValidationException',
        `Malformed input request: extraneous key [${keys[0] ?? 'inputText'}] is not permitted`,
      );
    const tokens = Math.max(1, Math.ceil(body.inputText.length / 4));
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 1024;
    return json(
      res,
      200,
      { embedding: fakeVector(body.inputText, dimensions), inputTextTokenCount: tokens },
      { 'x-amzn-bedrock-input-token-count': String(tokens) },
    );
  }
  const texts = Array.isArray(body.texts) ? body.texts.filter((t) => typeof t === 'string') : [];
  if (texts.length === 0 || typeof body.input_type !== 'string')
    return awsError(
      res,
      400,
      'ValidationException',
      'Malformed input request: texts and input_type are required',
    );
  return json(res, 200, {
    id: 'emb-fake-1',
    embeddings: texts.map((text) => fakeVector(text, 1024)),
    response_type: 'embeddings_floats',
    texts,
  });
}

/** Bedrock's front door: the credential checked, InvokeModel in Claude's shape, its stream in AWS's framing. */
async function bedrockCall(input: {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  raw: string;
  body: Record<string, unknown>;
  options: FakeCloudOptions;
  fault: { status: number; awsType?: string } | undefined;
  providersUrl: string;
}): Promise<void> {
  const { req, res, path, raw, body, options } = input;
  const aws = options.aws;
  if (!aws) return awsError(res, 500, 'InternalServerException', 'no AWS account configured');
  const authorization = String(req.headers.authorization ?? '');
  if (authorization.startsWith('Bearer ')) {
    if (authorization.slice(7) !== aws.apiKey)
      return awsError(
        res,
        403,
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
  } else {
    const problem = await sigV4Problem(req, path, raw, aws);
    if (problem)
      return awsError(
        res,
        403,
        problem.startsWith('The request signature')
          ? 'InvalidSignatureException'
          : 'UnrecognizedClientException',
        problem,
      );
  }
  if (input.fault)
    return awsError(
      res,
      input.fault.status,
      input.fault.awsType ?? 'ThrottlingException',
      'Too many requests, please wait before trying again.',
    );
  const converse = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(path);
  if (converse)
    return converseCall(res, decodeURIComponent(converse[1] ?? ''), converse[2] === 'converse-stream', body);
  const call = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(path);
  if (!call) return awsError(res, 404, 'UnknownOperationException', 'unknown operation');
  const modelId = decodeURIComponent(call[1] ?? '');
  if (/^(amazon\.titan-embed|cohere\.embed)/.test(modelId) && call[2] === 'invoke')
    return bedrockEmbeddings(res, modelId, body);
  if (!/^((us|eu|apac)\.)?anthropic\.claude/.test(modelId))
    return awsError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
  if (body.anthropic_version !== 'bedrock-2023-05-31' || 'model' in body || 'stream' in body)
    return awsError(
      res,
      400,
      'ValidationException',
      'Malformed input request: anthropic_version must be bedrock-2023-05-31; model and stream are not allowed',
    );
  const stream = call[2] === 'invoke-with-response-stream';
  const { anthropic_version: _version, anthropic_beta: _beta, ...rest } = body;
  const answer = await fetch(`${input.providersUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'inner', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...rest, model: modelId, ...(stream ? { stream: true } : {}) }),
  });
  const text = await answer.text();
  if (!stream || answer.status !== 200) {
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'x-amzn-bedrock-input-token-count': '0',
    });
    return void res.end(text);
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'r1' });
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').find((line) => line.startsWith('data: '));
    if (!data) continue;
    const event = JSON.parse(data.slice(6)) as Record<string, unknown>;
    if (event.type === 'ping') continue;
    const frame = bedrockChunk(event);
    // Split a message across writes, as TCP may: the relay must join the pieces.
    res.write(frame.subarray(0, 7));
    res.write(frame.subarray(7));
  }
  res.end();
}
