/**
 * One realtime session once both sockets are open (docs/adr/0032): frames piped both ways as they come (text and
 * binary, never buffered beyond the sockets' own backpressure), and each response billed on its own. Before a
 * response starts, its cost is held on the ledger — the conversation so far and the input added since, at the
 * audio price, and its output up to the limit the relay sets on it — so a session never runs past the balance;
 * its `response.done` settles the hold with the upstream's usage and writes one consume log. A response the session
 * ends before its `response.done` is settled with the output counted from its deltas.
 */

import type { Hold } from '@turnpike/core/billing/ledger';
import type { Pricing } from '@turnpike/core/billing/ratios';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { type Billing, settle } from '../books/settle.ts';
import type { Payer } from '../books/settlement-context.ts';
import type { NormalisedUsage, RelayRequest } from '../contract.ts';
import type { LimitTicket } from '../limits/limiter.ts';
import { normaliseOpenAiUsage } from '../metering/usage.ts';
import { holdQuota } from '../pipeline/billing.ts';
import type { RelayContext } from '../pipeline/context.ts';
import type { Caller } from '../state/auth-cache.ts';
import type { RelayChannel } from '../state/channel-cache.ts';
import { estimateResponse } from './estimate.ts';
import {
  appendedAudioTokens,
  capResponseCreate,
  capSessionUpdate,
  deltaTokens,
  errorEvent,
  erroredEventIdOf,
  frameTypeOf,
  itemTokens,
  type Json,
  outputCapOf,
  parseEvent,
  realtimeUsageOf,
  responseIdOf,
  sessionLimitField,
} from './events.ts';

/** An upstream frame that arrived before the session took the socket over. */
export interface EarlyFrame {
  readonly data: RawData;
  readonly isBinary: boolean;
}

export interface RealtimeSessionInput {
  readonly ctx: RelayContext;
  /** The upgrade request, as the settlement and the logs see it. */
  readonly request: RelayRequest;
  readonly caller: Caller;
  readonly payer: Payer;
  readonly pricing: Pricing;
  readonly channel: RelayChannel;
  readonly upstreamModel: string;
  /** The client speaks the beta event shapes (`openai-beta: realtime=v1`). */
  readonly isBeta: boolean;
  readonly client: WebSocket;
  readonly upstream: WebSocket;
  /** What the upstream sent before the session started, replayed first. */
  readonly early: readonly EarlyFrame[];
  /** Admits a response's tokens against the tokens-per-minute limits; absent when none applies. */
  readonly admitTokens?:
    | ((
        tokens: number,
      ) => Promise<{ ok: true; ticket: LimitTicket | undefined } | { ok: false; message: string }>)
    | undefined;
}

export interface RealtimeSession {
  /** Resolves once both sockets are closed and every response is settled. */
  readonly ended: Promise<void>;
  /** Ends the session with a close frame (a draining relay: 1001). */
  close(code: number, reason: string): void;
}

/** One response's money: its hold (being made, for a response the upstream started itself), and what it produced. */
interface Charge {
  readonly billing: Promise<Billing | undefined>;
  readonly heldAt: number;
  /** The client event that asked for it, so an upstream error about that event refunds it. */
  readonly eventId: string | undefined;
  createdAt: number | undefined;
  firstOutputAt: number | undefined;
  countedAudio: number;
  countedText: number;
  /** Input tokens the hold was figured with. */
  readonly inputEstimate: number;
}

/** Above this many bytes waiting to be sent on one socket, the other one is paused until they are written. */
const HIGH_WATER = 1 << 20;

const isText = (data: RawData, isBinary: boolean): data is Buffer => !isBinary && Buffer.isBuffer(data);

export function startRealtimeSession(input: RealtimeSessionInput): RealtimeSession {
  const { ctx, request, caller, payer, pricing, channel, upstreamModel, isBeta, client, upstream } = input;
  const quotaPerUnit = ctx.deps.options.get('QuotaPerUnit');
  /** The conversation's size as the upstream last reported it (input and output of the last response). */
  let conversationTokens = 0;
  /** Input added since the last response started. */
  let addedTokens = 0;
  /** The output limit the client set on the session, if it set one. */
  let sessionLimit: number | undefined;
  /** Holds made for the client's `response.create`, waiting for their `response.created` (in order). */
  const waiting: Charge[] = [];
  const active = new Map<string, Charge>();
  const settling: Promise<unknown>[] = [];
  let ownEventIds = 0;

  const newCharge = (
    billing: Promise<Billing | undefined>,
    inputEstimate: number,
    eventId?: string,
  ): Charge => ({
    billing,
    heldAt: performance.now(),
    eventId,
    createdAt: undefined,
    firstOutputAt: undefined,
    countedAudio: 0,
    countedText: 0,
    inputEstimate,
  });
  const billingOf = (held: Hold, limits: LimitTicket[] = []): Billing => ({
    payer,
    pricing,
    hold: held,
    fixedQuota: undefined,
    settled: false,
    limits,
  });

  /**
   * Holds the next response: the conversation and the input added since, and `outputCap` of output; its tokens are
   * admitted against the tokens-per-minute limits first.
   */
  const holdResponse = async (
    outputCap: number,
    eventId?: string,
  ): Promise<{ charge: Charge } | { refusal: { code: string; message: string } }> => {
    const inputEstimate = conversationTokens + addedTokens;
    const limited = input.admitTokens ? await input.admitTokens(inputEstimate + outputCap) : undefined;
    if (limited && !limited.ok) return { refusal: { code: 'rate_limit_exceeded', message: limited.message } };
    const tickets = limited?.ticket ? [limited.ticket] : [];
    const held = await holdQuota(
      ctx,
      payer,
      estimateResponse(pricing, inputEstimate, outputCap, quotaPerUnit),
    );
    if (!held.ok) {
      for (const ticket of tickets) ticket.settle(0);
      return { refusal: { code: 'insufficient_quota', message: held.error.message } };
    }
    addedTokens = 0;
    return { charge: newCharge(Promise.resolve(billingOf(held.hold, tickets)), inputEstimate, eventId) };
  };

  const settleCharge = (
    charge: Charge,
    usage: NormalisedUsage | undefined,
    responseId: string | undefined,
  ) => {
    const done = charge.billing.then(async (billing) => {
      if (!billing) return;
      const startedAt = charge.createdAt ?? charge.heldAt;
      await settle(
        ctx,
        request,
        caller,
        billing,
        usage === undefined
          ? undefined
          : {
              usage,
              channelId: channel.id,
              usedChannels: [channel.id],
              upstreamModel,
              isStream: true,
              frtMs: charge.firstOutputAt === undefined ? undefined : charge.firstOutputAt - startedAt,
              startedAt,
              upstreamSentAt: startedAt,
              upstreamMsBefore: 0,
              other: { realtime: true, ...(responseId ? { realtime_response_id: responseId } : {}) },
            },
      );
    });
    settling.push(
      done.catch((err: unknown) => request.log.error({ err }, 'could not settle a realtime response')),
    );
  };

  /** What a response produced when the session ended before its `response.done`: the counted output. */
  const countedUsage = (charge: Charge): NormalisedUsage | undefined => {
    const output = charge.countedAudio + charge.countedText;
    if (output === 0) return undefined;
    return {
      promptTokens: charge.inputEstimate,
      completionTokens: output,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      audioInputTokens: 0,
      audioOutputTokens: charge.countedAudio,
      reasoningTokens: 0,
      source: 'counted',
    };
  };

  // Client → upstream. A `response.create` waits for its hold; the frames after it wait in order behind it.
  const queued: { data: RawData; isBinary: boolean }[] = [];
  let holding = false;

  const toUpstream = (data: RawData | string, isBinary: boolean) => {
    if (upstream.readyState !== upstream.OPEN) return;
    upstream.send(data, { binary: isBinary }, () => {
      if (client.isPaused && upstream.bufferedAmount < HIGH_WATER / 2) client.resume();
    });
    if (upstream.bufferedAmount > HIGH_WATER && !client.isPaused) client.pause();
  };
  const toClient = (data: RawData | string, isBinary: boolean) => {
    if (client.readyState !== client.OPEN) return;
    client.send(data, { binary: isBinary }, () => {
      if (upstream.isPaused && client.bufferedAmount < HIGH_WATER / 2) upstream.resume();
    });
    if (client.bufferedAmount > HIGH_WATER && !upstream.isPaused) upstream.pause();
  };

  const fromClient = async (data: RawData, isBinary: boolean): Promise<void> => {
    if (!isText(data, isBinary)) return toUpstream(data, isBinary);
    // Only the head of a frame is decoded to learn its type; the few events that matter are read whole.
    const type = frameTypeOf(data);
    if (type === 'input_audio_buffer.append') {
      addedTokens += appendedAudioTokens(data.length);
      return toUpstream(data, false);
    }
    if (type !== 'session.update' && type !== 'response.create' && type !== 'conversation.item.create')
      return toUpstream(data, false);
    const event = parseEvent(data.toString('utf8'));
    if (!event) return toUpstream(data, false);
    if (type === 'conversation.item.create') {
      addedTokens += itemTokens(event);
      return toUpstream(data, false);
    }
    if (type === 'session.update') {
      const capped = capSessionUpdate(event, isBeta);
      sessionLimit = capped.requested;
      return toUpstream(JSON.stringify(capped.event), false);
    }
    // response.create: held first, refused inside the session (an `error` event) when the balance cannot cover it.
    const eventId = typeof event.event_id === 'string' ? event.event_id : `turnpike_${++ownEventIds}`;
    const capped = capResponseCreate({ ...event, event_id: eventId }, sessionLimit);
    const held = await holdResponse(capped.outputCap, eventId);
    if ('refusal' in held) {
      toClient(errorEvent(held.refusal.code, held.refusal.message, eventId), false);
      return;
    }
    waiting.push(held.charge);
    toUpstream(JSON.stringify(capped.event), false);
  };

  const drainQueue = async () => {
    holding = true;
    try {
      while (queued.length > 0) {
        const next = queued.shift()!;
        await fromClient(next.data, next.isBinary);
      }
    } catch (err) {
      request.log.error({ err }, 'realtime client event failed');
      close(1011, 'internal error');
    } finally {
      holding = false;
    }
  };

  client.on('message', (data, isBinary) => {
    queued.push({ data, isBinary });
    if (!holding) void drainQueue();
  });

  // Upstream → client: forwarded at once; the few events that concern money are read on the way.
  const fromUpstream = (data: RawData, isBinary: boolean) => {
    if (!isText(data, isBinary)) return toClient(data, isBinary);
    const type = frameTypeOf(data) ?? '';
    if (type.endsWith('.delta')) {
      const counted = deltaTokens(type, data);
      if (counted.audio + counted.text > 0) {
        for (const charge of active.values()) {
          charge.firstOutputAt ??= performance.now();
          charge.countedAudio += counted.audio;
          charge.countedText += counted.text;
          break;
        }
      }
      return toClient(data, false);
    }
    if (type === 'response.created') onResponseCreated(parseEvent(data.toString('utf8')));
    else if (type === 'response.done') onResponseDone(parseEvent(data.toString('utf8')));
    else if (type === 'error') onUpstreamError(parseEvent(data.toString('utf8')));
    else if (type === 'session.created') limitSession();
    toClient(data, false);
  };

  /** Caps the output of every response the session starts on its own (server voice activity detection). */
  const limitSession = () => {
    const update = {
      type: 'session.update',
      event_id: `turnpike_${++ownEventIds}`,
      session: {
        ...(isBeta ? {} : { type: 'realtime' }),
        [sessionLimitField(isBeta)]: outputCapOf(sessionLimit),
      },
    };
    toUpstream(JSON.stringify(update), false);
  };

  const onResponseCreated = (event: Json | undefined) => {
    const responseId = event && responseIdOf(event);
    if (!responseId) return;
    const asked = waiting.shift();
    if (asked) {
      asked.createdAt = performance.now();
      active.set(responseId, asked);
      return;
    }
    // The upstream started this response itself (voice activity): hold it now, and cancel it if refused. What
    // it produced before the cancel is still billed, against a hold of nothing.
    const inputEstimate = conversationTokens + addedTokens;
    const billing = holdResponse(outputCapOf(sessionLimit)).then(async (held) => {
      if ('charge' in held) return held.charge.billing;
      toUpstream(JSON.stringify({ type: 'response.cancel', response_id: responseId }), false);
      toClient(errorEvent(held.refusal.code, held.refusal.message), false);
      const nothing = await holdQuota(ctx, payer, 0);
      return nothing.ok ? billingOf(nothing.hold) : undefined;
    });
    // Read only when the response settles; a failed hold is logged at once, never left an unhandled rejection.
    billing.catch((err: unknown) => request.log.error({ err }, 'could not hold a realtime response'));
    const charge = newCharge(billing, inputEstimate);
    charge.createdAt = performance.now();
    active.set(responseId, charge);
  };

  const onResponseDone = (event: Json | undefined) => {
    const responseId = event && responseIdOf(event);
    if (!event || !responseId) return;
    const charge = active.get(responseId);
    if (!charge) return;
    active.delete(responseId);
    const usage = normaliseOpenAiUsage(realtimeUsageOf(event));
    if (usage) conversationTokens = usage.promptTokens + usage.completionTokens;
    settleCharge(charge, usage ?? countedUsage(charge), responseId);
  };

  /** An error about a `response.create` that never started: its hold comes back. */
  const onUpstreamError = (event: Json | undefined) => {
    const eventId = event && erroredEventIdOf(event);
    if (!eventId) return;
    const index = waiting.findIndex((charge) => charge.eventId === eventId);
    if (index < 0) return;
    const [charge] = waiting.splice(index, 1);
    settleCharge(charge!, undefined, undefined);
  };

  let closed = false;
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    for (const socket of [client, upstream]) {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING)
        socket.close(code, reason);
    }
  };
  const bothClosed = Promise.all(
    [client, upstream].map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === socket.CLOSED) resolve();
          else socket.once('close', () => resolve());
        }),
    ),
  );
  // Either side closing ends the session: the other is closed with the same code where it may be sent.
  const sendable = (code: number) => code === 1000 || (code >= 3000 && code <= 4999) || code === 1001;
  client.once('close', (code, reason) => close(sendable(code) ? code : 1000, reason.toString()));
  upstream.once('close', (code, reason) =>
    close(sendable(code) ? code : 1011, reason.toString() || 'the upstream closed the session'),
  );
  for (const [socket, name] of [
    [client, 'client'],
    [upstream, 'upstream'],
  ] as const) {
    socket.on('error', (err) => {
      request.log.warn({ err, side: name }, 'realtime socket failed');
      socket.terminate();
    });
  }

  upstream.removeAllListeners('message');
  for (const frame of input.early) fromUpstream(frame.data, frame.isBinary);
  upstream.on('message', fromUpstream);

  const ended = bothClosed.then(async () => {
    for (const charge of waiting.splice(0)) settleCharge(charge, undefined, undefined);
    for (const [responseId, charge] of active) settleCharge(charge, countedUsage(charge), responseId);
    active.clear();
    await Promise.all(settling);
  });

  return { ended, close };
}
