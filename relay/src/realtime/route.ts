/**
 * `GET /v1/realtime?model=…` upgraded to a WebSocket (docs/adr/0032), for OpenAI and Azure realtime channels.
 * Before the upgrade is accepted, the call goes through what every relay call does — token auth (the bearer
 * header, or the `openai-insecure-api-key.<key>` subprotocol browsers use), the model's permission and price, a
 * balance that covers at least one response — and the upstream session is opened with the channel's key, trying
 * the next channel when one fails. A refusal is an HTTP answer in OpenAI's error shape, before any upgrade. On
 * drain, open sessions get the grace period, then a close frame (1001) that tells the client to reconnect.
 */

import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import { isPricingRefusal } from '@turnpike/core/billing/ratios';
import { isRoot } from '@turnpike/core/domain/users';
import { requestIdOf } from '@turnpike/core/http/request-id';
import { LimitKind } from '@turnpike/core/options/rate-limits';
import type { RelayProviderId } from '@turnpike/core/providers/catalogue';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import type { Payer } from '../books/settlement-context.ts';
import type { ChannelView, RelayError, RelayRequest } from '../contract.ts';
import { localError, toOpenAiErrorBody } from '../errors.ts';
import { type Check, channelChecks, type LimitTicket, requestChecks } from '../limits/limiter.ts';
import { callerWindows } from '../limits/windows.ts';
import { checkModelAllowed } from '../pipeline/authenticate.ts';
import { authenticateRequest } from '../pipeline/authenticate-request.ts';
import { holdQuota } from '../pipeline/billing.ts';
import { checkChannelHealth } from '../pipeline/channel-health.ts';
import type { RelayContext } from '../pipeline/context.ts';
import { unknownModel } from '../pipeline/relay.ts';
import { azureRealtime } from '../providers/azure/realtime.ts';
import { openAiRealtime } from '../providers/openai/realtime.ts';
import type { RealtimeUpstream } from '../providers/openai/realtime-address.ts';
import { providerFor } from '../providers/registry.ts';
import { pickChannel, tiersFor } from '../routing/pick.ts';
import type { Caller } from '../state/auth-cache.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { estimateResponse } from './estimate.ts';
import { proxyAgentOf } from './proxy-agent.ts';
import { type EarlyFrame, type RealtimeSession, startRealtimeSession } from './session.ts';

const REALTIME_PATH = '/v1/realtime';
const KEY_PROTOCOL = 'openai-insecure-api-key.';
const BETA_PROTOCOL = 'openai-beta.realtime-v1';
/** The largest frame either side may send (an audio append of a long utterance stays far below). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const UPSTREAM_HANDSHAKE_MS = 10_000;

/** Who opens a realtime session upstream, by provider. */
const REALTIME_ADDRESSES: Partial<
  Record<RelayProviderId, (channel: ChannelView, model: string) => RealtimeUpstream>
> = { openai: openAiRealtime, azure: azureRealtime };

const trustAll = () => true;

/** The subprotocols a client offered (`Sec-WebSocket-Protocol`, comma-separated). */
const offeredProtocols = (request: IncomingMessage): string[] =>
  String(request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== '');

/** An HTTP answer on the raw socket, before (instead of) the upgrade. */
function refuse(
  socket: Duplex,
  error: RelayError,
  requestId: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(toOpenAiErrorBody(error, requestId));
  const extra = {
    ...(error.retryAfterSeconds ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
    ...headers,
  };
  const lines = Object.entries(extra).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n${lines.join('')}connection: close\r\n\r\n${body}`,
  );
}

/** The upstream session of a channel, and the channel's limit slot it holds. */
interface OpenedChannel {
  readonly channel: RelayChannel;
  readonly upstreamModel: string;
  readonly socket: WebSocket;
  readonly early: EarlyFrame[];
  readonly ticket: LimitTicket | undefined;
}

type Opened = { ok: true; socket: WebSocket; early: EarlyFrame[] } | { ok: false; error: RelayError };

/** Opens the upstream session; an HTTP refusal is read the channel's provider's way. */
function openUpstream(
  address: RealtimeUpstream,
  proxy: string | undefined,
  isBeta: boolean,
  readError: (status: number, body: string, headers: IncomingMessage['headers']) => RelayError,
): Promise<Opened> {
  return new Promise((resolve) => {
    const socket = new WebSocket(address.url, {
      headers: { ...address.headers, ...(isBeta ? { 'openai-beta': 'realtime=v1' } : {}) },
      perMessageDeflate: false,
      handshakeTimeout: UPSTREAM_HANDSHAKE_MS,
      maxPayload: MAX_FRAME_BYTES,
      agent: proxyAgentOf(proxy),
    });
    // The upstream speaks first (`session.created`): what it says before the client's upgrade is kept for it.
    const early: EarlyFrame[] = [];
    socket.on('message', (data, isBinary) => early.push({ data, isBinary }));
    socket.once('open', () => resolve({ ok: true, socket, early }));
    socket.once('unexpected-response', (request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => {
        request.destroy();
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ ok: false, error: readError(response.statusCode ?? 502, body, response.headers) });
      });
    });
    socket.once('error', (err) => {
      socket.terminate();
      resolve({
        ok: false,
        error: {
          status: 502,
          // The code only: a proxy's message may name its address and credentials.
          message: `could not open the upstream realtime session (${(err as NodeJS.ErrnoException).code ?? 'connection failed'})`,
          type: 'upstream_error',
          code: 'do_request_failed',
          param: null,
          isLocal: false,
        },
      });
    });
  });
}

export function registerRealtime(app: FastifyInstance, ctx: RelayContext): void {
  const sessions = new Set<RealtimeSession>();
  let draining = false;
  const server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_FRAME_BYTES,
    // The key's own subprotocol is never echoed back when another was offered.
    handleProtocols: (protocols) => {
      if (protocols.has('realtime')) return 'realtime';
      for (const protocol of protocols) if (!protocol.startsWith(KEY_PROTOCOL)) return protocol;
      return protocols.values().next().value ?? false;
    },
  });

  /** The upstream session on the first channel of the model that opens one. */
  const openChannel = async (
    request: RelayRequest,
    caller: Caller,
    model: string,
    isBeta: boolean,
  ): Promise<OpenedChannel | RelayError> => {
    const tried = new Set<number>();
    let lastError: RelayError | undefined;
    const retries = ctx.deps.options.get('RetryTimes');
    for (let attempt = 0; attempt <= retries; attempt += 1) {
      const channelId =
        caller.forcedChannelId ??
        pickChannel(ctx.channels.table, {
          group: caller.group,
          model,
          attempt,
          tried,
          isAvailable: (id) => ctx.channels.isAvailable(id) && realtimeOf(ctx.channels.get(id)) !== undefined,
        })?.channelId;
      if (channelId === undefined || tried.has(channelId)) break;
      tried.add(channelId);
      // A multi-key channel lends one usable key to the session (docs/adr/0027).
      const channel = ctx.channels.withKey(channelId);
      const address = realtimeOf(channel);
      if (!channel || !address || channel.key === undefined) break;
      const upstreamModel = channel.modelMapping[model] ?? model;
      const provider = providerFor(channel.type, upstreamModel);
      if (!provider) break;
      // The channel's own request and concurrency limits: a session holds one of its slots while it lasts.
      const admitted = await admitSession(ctx, channelChecks(channel));
      if (!admitted.ok) {
        lastError = admitted.error;
        continue;
      }
      const opened = await openUpstream(
        address(channel, upstreamModel),
        channel.proxy,
        isBeta,
        provider.readError,
      );
      if (opened.ok)
        return {
          channel,
          upstreamModel,
          socket: opened.socket,
          early: opened.early,
          ticket: admitted.ticket,
        };
      admitted.ticket?.settle(0);
      lastError = opened.error;
      // A failure that was one key's alone leaves the channel to be tried again with another of its keys.
      if (checkChannelHealth(ctx, channel, opened.error) && ctx.channels.isAvailable(channelId))
        tried.delete(channelId);
      request.log.warn({ channelId, status: opened.error.status }, 'upstream realtime session refused');
    }
    return (
      lastError ??
      localError(503, 'model_not_available', `no realtime channel of ${model} is available right now`)
    );
  };

  const accept = async (raw: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const id = requestIdOf(raw.headers);
    const url = new URL(raw.url ?? '/', 'http://relay');
    if (url.pathname !== REALTIME_PATH)
      return refuse(socket, localError(404, 'not_found', `no WebSocket route ${url.pathname}`), id);
    if (draining)
      return refuse(
        socket,
        { ...localError(503, 'draining', 'this relay is restarting; reconnect'), retryAfterSeconds: 1 },
        id,
      );
    const protocols = offeredProtocols(raw);
    const keyProtocol = protocols.find((protocol) => protocol.startsWith(KEY_PROTOCOL));
    const authorization =
      raw.headers.authorization ??
      (keyProtocol ? `Bearer ${keyProtocol.slice(KEY_PROTOCOL.length)}` : undefined);
    const request: RelayRequest = {
      id,
      ip: ctx.deps.config.trustProxy ? proxyAddr(raw, trustAll) : (raw.socket.remoteAddress ?? ''),
      method: 'GET',
      url: REALTIME_PATH,
      headers: { ...raw.headers, authorization },
      body: {},
      raw,
      log: ctx.log.child({ reqId: id }),
      routeOptions: { url: REALTIME_PATH },
    };
    const auth = await authenticateRequest(ctx, request);
    if (!auth.ok) return refuse(socket, auth.error, id);
    const { caller } = auth;
    const model = url.searchParams.get('model') ?? '';
    if (!model)
      return refuse(
        socket,
        localError(400, 'missing_model', 'the model query parameter is required', 'invalid_request_error'),
        id,
      );
    const notAllowed = checkModelAllowed(caller, model);
    if (notAllowed) return refuse(socket, notAllowed, id);
    if (
      caller.forcedChannelId === undefined &&
      tiersFor(ctx.channels.table, caller.group, model).length === 0
    )
      return refuse(socket, unknownModel(model, caller.group), id);
    const pricing = ctx.prices.pricingOf({
      model,
      group: caller.group,
      acceptUnsetModelRatio: caller.user.acceptUnsetModelRatio,
      isRoot: isRoot(caller.user.role),
    });
    if (isPricingRefusal(pricing))
      return refuse(socket, localError(400, pricing.code, pricing.message, 'invalid_request_error'), id);
    const payer: Payer = {
      userId: caller.user.id,
      tokenId: caller.token.id,
      tokenUnlimited: caller.token.unlimitedQuota,
      windows: callerWindows(ctx.deps.options, caller, true),
    };
    // A session starts only with a balance that covers the smallest response; each response is held on its own.
    const floor = await holdQuota(
      ctx,
      payer,
      estimateResponse(pricing, 0, 1, ctx.deps.options.get('QuotaPerUnit')),
    );
    if (!floor.ok) return refuse(socket, floor.error, id);
    await ctx.ledger.settle(floor.hold, 0);

    // The caller's limits (docs/adr/0028): requests and concurrency for the session as a whole (one slot while it
    // lasts), tokens per response as each is held.
    const checks = requestChecks(
      ctx.deps.options,
      { userId: caller.user.id, group: caller.group, tokenId: caller.token.id, token: caller.token.limits },
      model,
    );
    const session = await admitSession(ctx, checks);
    if (!session.ok) return refuse(socket, session.error, id, session.headers);
    const isBeta =
      String(raw.headers['openai-beta'] ?? '').includes('realtime=v1') || protocols.includes(BETA_PROTOCOL);
    const opened = await openChannel(request, caller, model, isBeta);
    const releaseSlots = () => {
      session.ticket?.settle(0);
      if (!('status' in opened)) opened.ticket?.settle(0);
    };
    if ('status' in opened) {
      releaseSlots();
      return refuse(socket, opened, id, limitHeadersOf(opened));
    }
    if (socket.destroyed || draining) {
      releaseSlots();
      opened.socket.close(1000, 'the client left before the session started');
      return;
    }
    const tokenChecks = [...checks, ...channelChecks(opened.channel)].filter(
      (check) => check.kind === LimitKind.Tokens,
    );
    server.handleUpgrade(raw, socket, head, (client) => {
      const running = startRealtimeSession({
        ctx,
        request,
        caller,
        payer,
        pricing,
        channel: opened.channel,
        upstreamModel: opened.upstreamModel,
        isBeta,
        client,
        upstream: opened.socket,
        early: opened.early,
        admitTokens: tokenChecks.length === 0 ? undefined : (tokens) => admitTokens(ctx, tokenChecks, tokens),
      });
      sessions.add(running);
      const closeMetric = ctx.metrics.realtimeSessionStarted();
      void running.ended.finally(() => {
        sessions.delete(running);
        releaseSlots();
        closeMetric();
      });
    });
  };

  app.server.on('upgrade', (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    accept(raw, socket, head).catch((err: unknown) => {
      ctx.log.error({ err }, 'realtime upgrade failed');
      refuse(
        socket,
        localError(500, 'internal_error', 'the realtime session could not be started'),
        requestIdOf(raw.headers),
      );
    });
  });

  // Draining: no new session; open ones run on for the grace period, then get a close frame asking to reconnect.
  app.addHook('preClose', async () => {
    draining = true;
    if (sessions.size === 0) return;
    const graceMs = Math.max(ctx.deps.config.shutdownGraceSeconds * 1000 - 1000, 0);
    const timer = setTimeout(() => {
      for (const session of sessions) session.close(1001, 'the relay is restarting; reconnect');
    }, graceMs);
    await Promise.all([...sessions].map((session) => session.ended));
    clearTimeout(timer);
  });
  app.addHook('onClose', async () => {
    server.close();
  });
}

/** The realtime address of a channel's provider, if it has one. */
function realtimeOf(channel: RelayChannel | undefined) {
  const provider = channel && providerFor(channel.type);
  return provider ? REALTIME_ADDRESSES[provider.id] : undefined;
}

/** Headers of a limit refusal, kept beside its error. */
const refusalHeaders = new WeakMap<RelayError, Readonly<Record<string, string>>>();
const limitHeadersOf = (error: RelayError) => refusalHeaders.get(error) ?? {};

/** Admits a session against the request and concurrency checks among `checks` (tokens are held per response). */
async function admitSession(
  ctx: RelayContext,
  checks: readonly Check[],
): Promise<
  | { ok: true; ticket: LimitTicket | undefined }
  | { ok: false; error: RelayError; headers: Readonly<Record<string, string>> }
> {
  const session = checks.filter((check) => check.kind !== LimitKind.Tokens);
  if (session.length === 0) return { ok: true, ticket: undefined };
  const admission = await ctx.limits.admit({ checks: session, estimateTokens: () => 0, isAnthropic: false });
  if (admission.ok) return admission;
  ctx.metrics.recordRateLimited(admission.scope, admission.kind);
  refusalHeaders.set(admission.error, admission.headers);
  return { ok: false, error: admission.error, headers: admission.headers };
}

/** Admits one response's tokens (its hold's input and output) against the tokens-per-minute checks. */
async function admitTokens(
  ctx: RelayContext,
  checks: readonly Check[],
  tokens: number,
): Promise<{ ok: true; ticket: LimitTicket | undefined } | { ok: false; message: string }> {
  const admission = await ctx.limits.admit({ checks, estimateTokens: () => tokens, isAnthropic: false });
  if (admission.ok) return admission;
  ctx.metrics.recordRateLimited(admission.scope, admission.kind);
  return { ok: false, message: admission.error.message };
}
