/**
 * A fake realtime upstream, speaking OpenAI's realtime WebSocket protocol as its API reference describes it: the
 * session opens with `session.created`; `session.update` answers `session.updated`; `conversation.item.create` and
 * `input_audio_buffer.append`/`commit` grow the conversation; `response.create` (or {@link FakeRealtime.startResponse},
 * a response the server starts on its own as voice activity would) answers `response.created`, audio and text
 * deltas, then `response.done` with its usage; `response.cancel` ends the response as cancelled. Beta event names
 * when the client sent `openai-beta: realtime=v1`, GA names otherwise.
 *
 * The credential is checked where each provider checks it: OpenAI (`/v1/realtime?model=`) a bearer token, Azure
 * (`/openai/realtime?api-version=&deployment=`) an `api-key` header; a wrong one is a 401 before the upgrade, in
 * the provider's error shape.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';

export interface FakeRealtimeOptions {
  readonly openAiKey?: string;
  readonly azureKey?: string;
  /** Audio deltas per response (each 3,200 base64 characters: one output audio token's worth). */
  readonly audioDeltas?: number;
  /** Milliseconds between deltas (a slow upstream). */
  readonly deltaIntervalMs?: number;
}

export interface FakeRealtimeSession {
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  /** Every client event the upstream received, parsed. */
  readonly received: Record<string, unknown>[];
  readonly socket: WebSocket;
}

export interface FakeRealtime {
  readonly url: string;
  readonly sessions: FakeRealtimeSession[];
  /** Starts a response on the latest session without a `response.create` (server voice activity). */
  startResponse(): void;
  close(): Promise<void>;
}

const TEXT_REPLY = 'Hello from the realtime fake.';
const AUDIO_DELTA = 'A'.repeat(3200);

export async function startFakeRealtime(options: FakeRealtimeOptions = {}): Promise<FakeRealtime> {
  const sessions: FakeRealtimeSession[] = [];
  const starters: (() => void)[] = [];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server: Server = createServer((_request, response) => {
    response.writeHead(404).end();
  });

  const refuse = (socket: Duplex, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  };

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const azure = url.pathname === '/openai/realtime';
    if (url.pathname !== '/v1/realtime' && !azure)
      return refuse(socket, 404, { error: { message: 'no route' } });
    const model = azure ? url.searchParams.get('deployment') : url.searchParams.get('model');
    if (azure && !url.searchParams.get('api-version'))
      return refuse(socket, 400, { error: { code: 'MissingApiVersionParameter', message: 'api-version' } });
    const credentialOk = azure
      ? request.headers['api-key'] === options.azureKey
      : request.headers.authorization === `Bearer ${options.openAiKey}`;
    if (!credentialOk)
      return refuse(
        socket,
        401,
        azure
          ? { error: { code: '401', message: 'Access denied due to invalid subscription key.' } }
          : {
              error: {
                message: 'Incorrect API key provided',
                type: 'invalid_request_error',
                code: 'invalid_api_key',
              },
            },
      );
    wss.handleUpgrade(request, socket, head, (ws) => {
      const record: FakeRealtimeSession = {
        url: request.url ?? '',
        headers: request.headers,
        received: [],
        socket: ws,
      };
      sessions.push(record);
      const beta = String(request.headers['openai-beta'] ?? '').includes('realtime=v1');
      serveSession(ws, record, beta, String(model), options, starters);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    startResponse: () => starters.at(-1)?.(),
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function serveSession(
  ws: WebSocket,
  record: FakeRealtimeSession,
  beta: boolean,
  model: string,
  options: FakeRealtimeOptions,
  starters: (() => void)[],
) {
  let events = 0;
  let responses = 0;
  const send = (event: Record<string, unknown>) => {
    events += 1;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: `event_${events}`, ...event }));
  };
  const limitField = beta ? 'max_response_output_tokens' : 'max_output_tokens';
  const session: Record<string, unknown> = {
    id: 'sess_fake',
    object: 'realtime.session',
    model,
    [limitField]: 'inf',
  };
  /** The conversation's tokens so far: text at 4 characters a token, audio as OpenAI counts it. */
  let conversationText = 0;
  let conversationAudio = 0;
  let bufferedAudio = 0;
  let active: { id: string; cancelled: boolean } | undefined;

  const runResponse = async (limit: number | undefined) => {
    responses += 1;
    const id = `resp_${responses}`;
    active = { id, cancelled: false };
    const current = active;
    send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress' } });
    const audioTokens = Math.min(options.audioDeltas ?? 4, limit ?? Number.POSITIVE_INFINITY);
    const textTokens = Math.ceil(TEXT_REPLY.length / 4);
    let sentAudio = 0;
    for (let i = 0; i < audioTokens; i += 1) {
      if (options.deltaIntervalMs)
        await new Promise((resolve) => setTimeout(resolve, options.deltaIntervalMs));
      if (current.cancelled || ws.readyState !== ws.OPEN) break;
      send({
        type: beta ? 'response.audio.delta' : 'response.output_audio.delta',
        response_id: id,
        delta: AUDIO_DELTA,
      });
      sentAudio += 1;
    }
    if (ws.readyState !== ws.OPEN) return;
    send({
      type: beta ? 'response.text.delta' : 'response.output_text.delta',
      response_id: id,
      delta: TEXT_REPLY,
    });
    const inputText = conversationText;
    const inputAudio = conversationAudio;
    const input = inputText + inputAudio;
    const output = current.cancelled ? sentAudio : sentAudio + textTokens;
    send({
      type: 'response.done',
      response: {
        id,
        object: 'realtime.response',
        status: current.cancelled ? 'cancelled' : 'completed',
        usage: {
          total_tokens: input + output,
          input_tokens: input,
          output_tokens: output,
          input_token_details: { cached_tokens: 0, text_tokens: inputText, audio_tokens: inputAudio },
          output_token_details: { text_tokens: output - sentAudio, audio_tokens: sentAudio },
        },
      },
    });
    // The answer joins the conversation.
    conversationText += output - sentAudio;
    conversationAudio += sentAudio;
    if (active === current) active = undefined;
  };

  starters.push(() => {
    const limit = session[limitField];
    void runResponse(typeof limit === 'number' ? limit : undefined);
  });

  ws.on('message', (data: RawData) => {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data.toString()) as Record<string, unknown>;
    } catch {
      send({
        type: 'error',
        error: { type: 'invalid_request_error', code: 'invalid_json', message: 'not JSON' },
      });
      return;
    }
    record.received.push(event);
    const eventId = typeof event.event_id === 'string' ? event.event_id : null;
    switch (event.type) {
      case 'session.update':
        Object.assign(session, event.session);
        send({ type: 'session.updated', session });
        return;
      case 'conversation.item.create': {
        const item = (event.item ?? {}) as { content?: { text?: string }[] };
        for (const part of item.content ?? []) conversationText += Math.ceil((part.text ?? '').length / 4);
        send({ type: 'conversation.item.created', item: event.item });
        return;
      }
      case 'input_audio_buffer.append':
        bufferedAudio += Math.ceil(String(event.audio ?? '').length / 6400);
        return;
      case 'input_audio_buffer.commit':
        conversationAudio += bufferedAudio;
        bufferedAudio = 0;
        send({ type: 'input_audio_buffer.committed' });
        return;
      case 'response.create': {
        if (active) {
          send({
            type: 'error',
            error: {
              type: 'invalid_request_error',
              code: 'conversation_already_has_active_response',
              message: 'Conversation already has an active response',
              event_id: eventId,
            },
          });
          return;
        }
        const response = (event.response ?? {}) as { max_output_tokens?: unknown };
        const sessionLimit = session[limitField];
        const limit =
          typeof response.max_output_tokens === 'number'
            ? response.max_output_tokens
            : typeof sessionLimit === 'number'
              ? sessionLimit
              : undefined;
        void runResponse(limit);
        return;
      }
      case 'response.cancel':
        if (active) active.cancelled = true;
        return;
      default:
        send({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            code: 'unknown_event',
            message: `unknown ${String(event.type)}`,
            event_id: eventId,
          },
        });
    }
  });
  send({ type: 'session.created', session });
}
