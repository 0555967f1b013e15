/**
 * The relay's routes on Fastify and on the front door: which path is which endpoint, the cross-origin preflight,
 * compressed bodies, and the answers of Fastify's own failures (a body it could not read, a path no route has), each
 * in the protocol the client's path belongs to (./protocol.ts).
 */
import type { Config } from '@turnpike/core/config';
import type { SessionCodec } from '@turnpike/core/sessions/session-codec';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import type { EndpointSpec, RelayError } from '../contract.ts';
import { DATABASE_RETRY_AFTER_SECONDS, gatewayFailureOf, localError, toOpenAiErrorBody } from '../errors.ts';
import { countTokensSpec, messagesSpec } from '../formats/anthropic/endpoints.ts';
import { geminiSpecOf, readModelAction } from '../formats/gemini/endpoints.ts';
import { geminiIngress } from '../formats/gemini/ingress.ts';
import {
  imageEditSpec,
  imageGenerationSpec,
  speechSpec,
  transcriptionsSpec,
  translationsSpec,
} from '../formats/openai/media-endpoints.ts';
import {
  chatSpec,
  completionsSpec,
  embeddingsSpec,
  moderationsSpec,
  rerankSpec,
  responsesCompactSpec,
  responsesSpec,
} from '../formats/openai/text-endpoints.ts';
import { registerMetricsHooks } from '../metrics/relay-metrics.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { geminiModels, listModels, retrieveModel } from '../pipeline/models.ts';
import { notImplemented } from '../pipeline/not-implemented.ts';
import { handlePlayground } from '../pipeline/playground.ts';
import { sendError } from '../pipeline/respond.ts';
import { registerResponseRoutes } from '../responses-store/routes.ts';
import { corsHeaders, isCrossOriginPath, preflightHeaders } from './cors.ts';
import { createFrontDoor, type FrontDoor } from './front-door.ts';
import { enterThrough, ingressOfPath, modelsIngressOf } from './protocol.ts';
import { decodeBody, UNREADABLE_ENCODING, unsupportedEncoding } from './request-encoding.ts';
import { type RelayHandler, relayHandler } from './route.ts';

/** The relay's POST routes with a fixed path (under /v1); the JSON ones go through the front door too. */
const FIXED_POSTS: Readonly<Record<string, EndpointSpec>> = {
  '/chat/completions': chatSpec,
  '/completions': completionsSpec,
  '/embeddings': embeddingsSpec,
  '/moderations': moderationsSpec,
  '/rerank': rerankSpec,
  '/responses': responsesSpec,
  '/responses/compact': responsesCompactSpec,
  '/images/generations': imageGenerationSpec,
  '/images/edits': imageEditSpec,
  '/audio/speech': speechSpec,
  '/audio/transcriptions': transcriptionsSpec,
  '/audio/translations': translationsSpec,
  '/messages': messagesSpec,
  '/messages/count_tokens': countTokensSpec,
};

/** The largest request body the relay reads (images and audio as base64 can be large). */
export const RELAY_BODY_LIMIT = 32 * 1024 * 1024;

/** Cross-origin access to the model routes (cors.ts) and their preflight. */
export function registerCors(app: FastifyInstance): void {
  // A callback hook, as an async one costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (isCrossOriginPath(request.url)) {
      const cors = corsHeaders(request.headers);
      if (cors) reply.headers(cors);
    }
    done();
  });
  const preflight = (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(204).headers(preflightHeaders(request.headers)).send();
  app.options('/v1/*', preflight);
  app.options('/dashboard/*', preflight);
}

/** `/v1/*`: OpenAI's routes, Anthropic's `/v1/messages`, and Gemini's actions on its stable version. */
export async function registerV1Routes(app: FastifyInstance, ctx: RelayContext): Promise<void> {
  const geminiAction = geminiActionHandler(ctx);
  await app.register(
    async (relay) => {
      registerMetricsHooks(relay, ctx.metrics);
      relay.setErrorHandler(failureHandler);
      relay.setNotFoundHandler((request, reply) =>
        reply
          .code(404)
          .send(
            toOpenAiErrorBody(
              localError(404, 'not_found', noRoute(request), 'invalid_request_error'),
              request.id,
            ),
          ),
      );
      // Multipart uploads are handed over unread: the endpoint spools them to disk (formats/multipart.ts).
      relay.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
      relay.addHook('preParsing', decompressBody);
      for (const [path, spec] of Object.entries(FIXED_POSTS)) relay.post(path, relayHandler(ctx, spec));
      relay.post('/engines/:model/embeddings', relayHandler(ctx, embeddingsSpec));
      relay.get('/models', (request, reply) => {
        const ingress = modelsIngressOf(request);
        enterThrough(ingress, request);
        return listModels(ctx, ingress, request, reply);
      });
      relay.get<{ Params: { model: string } }>('/models/:model', (request, reply) => {
        const ingress = modelsIngressOf(request);
        enterThrough(ingress, request);
        return retrieveModel(ctx, ingress, request, reply);
      });
      const unimplemented = (request: FastifyRequest, reply: FastifyReply) =>
        notImplemented(ctx, request, reply);
      for (const url of ['/fine-tunes', '/fine-tunes/*'])
        relay.route({ method: ['GET', 'POST', 'DELETE'], url, handler: unimplemented });
      relay.post('/images/variations', unimplemented);
      relay.delete('/models/:model', unimplemented);
      // Gemini clients on the stable version: `POST /v1/models/<model>:<action>`.
      relay.post('/models/*', geminiAction);
      registerResponseRoutes(relay, ctx);
    },
    { prefix: '/v1' },
  );
}

/** `/v1beta/*`: Gemini's own routes (model and action in the path; errors in Gemini's shape). */
export async function registerGeminiRoutes(app: FastifyInstance, ctx: RelayContext): Promise<void> {
  const geminiAction = geminiActionHandler(ctx);
  await app.register(
    async (gemini) => {
      gemini.setErrorHandler((error: FastifyError, request, reply) =>
        sendError(request, reply, failureOf(error, request, reply), geminiIngress),
      );
      gemini.setNotFoundHandler((request, reply) =>
        sendError(request, reply, localError(404, 'NOT_FOUND', noRoute(request)), geminiIngress),
      );
      gemini.addHook('preParsing', decompressBody);
      gemini.post<{ Params: { '*': string } }>('/models/*', geminiAction);
      gemini.get('/models', (request, reply) => {
        enterThrough(geminiIngress, request);
        return geminiModels(ctx, request, reply, undefined);
      });
      gemini.get<{ Params: { '*': string } }>('/models/*', (request, reply) => {
        enterThrough(geminiIngress, request);
        return geminiModels(ctx, request, reply, request.params['*']);
      });
    },
    { prefix: '/v1beta' },
  );
}

/** `/pg/*`: the console playground, session auth, same port as /api in ROLE=all (reference §2.3). */
export async function registerPlaygroundRoute(
  app: FastifyInstance,
  ctx: RelayContext,
  sessions: SessionCodec,
): Promise<void> {
  await app.register(
    async (playground) => {
      playground.setErrorHandler(failureHandler);
      playground.post('/chat/completions', (request, reply) =>
        handlePlayground(ctx, sessions, request, reply),
      );
    },
    { prefix: '/pg' },
  );
}

/** The front door of the JSON POST routes (docs/adr/0014): the same handlers, without Fastify's machinery. */
export function relayFrontDoor(ctx: RelayContext, config: Pick<Config, 'trustProxy'>): FrontDoor {
  return createFrontDoor({
    routes: new Map(
      Object.entries(FIXED_POSTS).map(([path, spec]) => [`/v1${path}`, relayHandler(ctx, spec)]),
    ),
    errorBody: (path, error, id) => ingressOfPath(path, 'POST').errorBody(error, id),
    metrics: ctx.metrics,
    log: ctx.log,
    trustProxy: config.trustProxy,
    bodyLimit: RELAY_BODY_LIMIT,
  });
}

const noRoute = (request: FastifyRequest): string =>
  `no route ${request.method} ${request.url.split('?')[0]}`;

/** A Fastify-level failure (bad JSON, body too large, a bug) as the error the client is answered: logged if a bug. */
function failureOf(error: FastifyError, request: FastifyRequest, reply: FastifyReply): RelayError {
  const failure = gatewayFailureOf(error);
  if (failure.status === 500) request.log.error({ err: error }, 'relay request failed');
  if (failure.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  return failure;
}

/**
 * Fastify-level failures in the shape of the client's protocol: Anthropic's routes refuse in Anthropic's shape even
 * before their handler ran, Gemini's in Gemini's (its actions are also served as POST /v1/models/{model}:{action}).
 */
function failureHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const failure = failureOf(error, request, reply);
  const ingress = ingressOfPath(request.url, request.method);
  return reply.code(failure.status).send(ingress.errorBody(failure, request.id));
}

/** Compressed request bodies (request-encoding.ts) on the routes Fastify serves; the front door does its own. */
function decompressBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
  done: (err: Error | null, payload?: RequestPayload) => void,
) {
  const decoded = decodeBody(request.headers['content-encoding'], payload, request.routeOptions.bodyLimit);
  if (decoded.kind === 'plain') return done(null, payload);
  if (decoded.kind === 'unsupported')
    return done(Object.assign(new Error(unsupportedEncoding(decoded.encoding)), { statusCode: 415 }));
  // Fastify checks Content-Length against the bytes received, which are the compressed ones.
  const body = decoded.body as RequestPayload;
  body.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength = (body.receivedEncodedLength ?? 0) + chunk.length;
  });
  body.on('error', (error: Error & { statusCode?: number }) => {
    if (error.statusCode === 413) return;
    error.statusCode = 400;
    error.message = UNREADABLE_ENCODING;
  });
  done(null, body);
}

/** The handler of `POST /v1beta/models/<model>:<action>` (also `/v1/models/...`, Gemini's stable version). */
function geminiActionHandler(ctx: RelayContext) {
  const handlers = new Map<EndpointSpec, RelayHandler>();
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.params as { '*'?: unknown } | undefined)?.['*'];
    const read = typeof path === 'string' ? readModelAction(path) : undefined;
    const spec = read && geminiSpecOf(read.action);
    if (!spec)
      return sendError(
        request,
        reply,
        localError(404, 'NOT_FOUND', 'unknown model action', 'invalid_request_error'),
        geminiIngress,
      );
    let handler = handlers.get(spec);
    if (!handler) {
      handler = relayHandler(ctx, spec);
      handlers.set(spec, handler);
    }
    return handler(request, reply);
  };
}
