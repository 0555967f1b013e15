/**
 * The relay: OpenAI-compatible `/v1/*` routes over the in-memory caches (state/) and the pipeline (pipeline/).
 * `registerRelay` adds them to any Fastify app, so ROLE=all serves them beside the console API on one port;
 * `buildRelayApp` is the app of a relay-only process (ROLE=relay).
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { RelayDeps } from './deps.ts';
import { localError, toOpenAiErrorBody } from './errors.ts';
import { createWordMatcher, type WordMatcher } from './metering/sensitive.ts';
import type { RelayContext } from './pipeline/context.ts';
import { listModels, retrieveModel } from './pipeline/models.ts';
import { handleText } from './pipeline/text.ts';
import { createBatchWriter } from './pipeline/writer.ts';
import { createAuthCache } from './state/auth-cache.ts';
import { createChannelCache } from './state/channel-cache.ts';
import { createUpstreamClient } from './upstream/client.ts';

export interface RelayOptions {
  /** Interval of the batching writer (logs, used quota, request counts); default 1 s. */
  readonly flushIntervalMs?: number;
  /** Debounce of routing-table rebuilds after `channels.changed`; default 100 ms. */
  readonly channelDebounceMs?: number;
}

/** Registers the relay routes and their state on `app`; everything is flushed and closed with the app. */
export async function registerRelay(
  app: FastifyInstance,
  deps: RelayDeps,
  options: RelayOptions = {},
): Promise<void> {
  const resyncMs = deps.config.syncFrequencySeconds * 1000;
  const onError = (context: string) => (err: unknown) =>
    app.log.error({ err, context }, 'relay background task failed');
  const auth = createAuthCache({
    db: deps.db,
    bus: deps.bus,
    maxAgeMs: resyncMs,
    onError: onError('token cache'),
  });
  const channels = createChannelCache({
    db: deps.db,
    bus: deps.bus,
    cryptoSecret: deps.config.cryptoSecret,
    resyncMs,
    debounceMs: options.channelDebounceMs ?? 100,
    onError: onError('channel cache'),
  });
  await channels.load();
  const upstream = createUpstreamClient();
  const writer = createBatchWriter({
    db: deps.db,
    intervalMs: options.flushIntervalMs ?? 1000,
    onError: onError('batch writer'),
  });
  let keywordText: string | undefined;
  let keywords: WordMatcher = createWordMatcher([]);
  const ctx: RelayContext = {
    deps,
    auth,
    channels,
    upstream,
    writer,
    log: app.log,
    keywords() {
      const text = deps.options.getText('AutomaticDisableKeywords');
      if (text !== keywordText) {
        keywordText = text;
        keywords = createWordMatcher(deps.options.get('AutomaticDisableKeywords'));
      }
      return keywords;
    },
  };

  await app.register(
    async (relay) => {
      relay.setErrorHandler((error: FastifyError, request, reply) => {
        const status =
          error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
        if (status === 500) request.log.error({ err: error }, 'relay request failed');
        const message = status === 500 ? 'internal error of the gateway' : error.message;
        const code = status === 500 ? 'internal_error' : 'invalid_request';
        const type = status === 500 ? 'new_api_error' : 'invalid_request_error';
        return reply
          .code(status)
          .send(toOpenAiErrorBody(localError(status, code, message, type), request.id));
      });
      relay.setNotFoundHandler((request, reply) =>
        reply
          .code(404)
          .send(
            toOpenAiErrorBody(
              localError(
                404,
                'not_found',
                `no route ${request.method} ${request.url.split('?')[0]}`,
                'invalid_request_error',
              ),
              request.id,
            ),
          ),
      );
      relay.post('/chat/completions', (request, reply) => handleText(ctx, 'chat', request, reply));
      relay.post('/embeddings', (request, reply) => handleText(ctx, 'embeddings', request, reply));
      relay.get('/models', (request, reply) => listModels(ctx, request, reply));
      relay.get<{ Params: { model: string } }>('/models/:model', (request, reply) =>
        retrieveModel(ctx, request, reply),
      );
    },
    { prefix: '/v1' },
  );

  app.addHook('onClose', async () => {
    auth.close();
    channels.close();
    await writer.close();
    await upstream.close();
  });
}

const REQUEST_ID = /^[\w.:-]{1,64}$/;

/** A relay-only app (ROLE=relay). */
export async function buildRelayApp(
  deps: RelayDeps,
  options: RelayOptions & { logger?: boolean | Record<string, unknown> } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      options.logger === undefined || options.logger === false
        ? false
        : {
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.key', '*.password'],
            ...(options.logger === true ? {} : options.logger),
          },
    trustProxy: deps.config.trustProxy,
    bodyLimit: 32 * 1024 * 1024,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  await registerRelay(app, deps, options);
  return app;
}
