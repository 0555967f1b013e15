/**
 * Content logs on the relay (docs/adr/0045): when the caller's group (`ContentLogGroups`) or token (a row of
 * `content_log_tokens`) keeps them, the call's prompt and answer are handed to a writer of their own
 * (content-log-writer.ts), which redacts, cuts and writes them off the request path. Everything here is memory: the
 * decision is two set lookups, and a call that keeps no content log gets no capture at all, so none of the code
 * below `open` runs for it. A capture holds the request's body (already in memory) and at most a bounded amount of
 * the answer: a stream's output pieces until the cap, a whole answer cut at it.
 */

import type { Db } from '@turnpike/core/db/client';
import type { EventBus } from '@turnpike/core/events/bus';
import type { OptionStore } from '@turnpike/core/options/store';
import { createContentLogRepo } from '@turnpike/core/repos/content-log.repo';
import type { PendingContent } from './content-log-writer.ts';
import type { PreparedExchange } from './exchange.ts';

/**
 * Characters of answer kept past the cap, so a secret across the cap is still whole when the writer redacts it
 * (the writer cuts to the cap after redacting).
 */
const REDACTION_MARGIN = 1_024;

/** Where a finished capture goes. */
export interface ContentSink {
  enqueue(content: PendingContent): void;
}

/** The prompt and answer of one call while it runs. */
export class ContentCapture {
  /** Starts the capture of one call (a method of its own, so a test can tell it never ran). */
  static start(sink: ContentSink, exchange: PreparedExchange, maxBytes: number): ContentCapture {
    return new ContentCapture(sink, exchange, maxBytes + REDACTION_MARGIN);
  }

  private readonly sink: ContentSink;
  private readonly exchange: PreparedExchange;
  private readonly limit: number;
  private readonly pieces: string[] = [];
  private kept = 0;
  private whole: string | undefined;
  private cut = false;
  private done = false;

  private constructor(sink: ContentSink, exchange: PreparedExchange, limit: number) {
    this.sink = sink;
    this.exchange = exchange;
    this.limit = limit;
  }

  /** A piece of a streamed answer's output (text, reasoning, a tool call), kept until the cap. */
  piece(text: string): void {
    if (this.kept >= this.limit) {
      this.cut = true;
      return;
    }
    const room = this.limit - this.kept;
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept.length < text.length) this.cut = true;
    this.pieces.push(kept);
    this.kept += kept.length;
  }

  /** A whole answer as the client got it. */
  answer(text: string): void {
    this.cut = text.length > this.limit;
    this.whole = this.cut ? text.slice(0, this.limit) : text;
  }

  /** The call is over (answered, failed or left): handed to the writer once. */
  finish(): void {
    if (this.done) return;
    this.done = true;
    const { request, caller, prepared } = this.exchange;
    this.sink.enqueue({
      requestId: request.id,
      userId: caller.user.id,
      tokenId: caller.token.id,
      model: prepared.model,
      createdAt: Math.floor(Date.now() / 1000),
      prompt: prepared.payload.kind === 'json' ? prepared.payload.body : prepared.promptTexts.join('\n'),
      answer: this.whole ?? this.pieces.join(''),
      cut: this.cut,
    });
  }
}

export interface ContentLogs {
  /** A capture for this call when its group or token keeps content logs; otherwise undefined. */
  open(exchange: PreparedExchange): ContentCapture | undefined;
  /** Reads which tokens keep content logs; then follows the bus. */
  load(): Promise<void>;
  close(): void;
}

/**
 * The decision (which groups and tokens keep content logs, from memory) and the start of a capture. Tokens are read
 * at start and again for the ids of every `tokens.changed` event (the console's switch publishes one).
 */
export function createContentLogs(deps: {
  readonly db: Db;
  readonly bus: EventBus;
  readonly options: OptionStore;
  readonly sink: ContentSink;
  readonly onError: (error: unknown) => void;
}): ContentLogs {
  const repo = createContentLogRepo(deps.db);
  let tokens = new Set<number>();
  let groupsText: string | undefined;
  let groups = new Set<string>();

  function groupsOn(): ReadonlySet<string> {
    const text = deps.options.getText('ContentLogGroups');
    if (text !== groupsText) {
      groupsText = text;
      groups = new Set(deps.options.get('ContentLogGroups'));
    }
    return groups;
  }

  async function refresh(ids: readonly number[]): Promise<void> {
    const on = new Set(await repo.tokensOn(ids));
    for (const id of ids) {
      if (on.has(id)) tokens.add(id);
      else tokens.delete(id);
    }
  }

  const unsubscribe = deps.bus.subscribe((event) => {
    if (event.type === 'tokens.changed') return refresh(event.ids).catch(deps.onError);
    if (event.type === 'all.changed')
      return repo
        .tokensOn()
        .then((ids) => {
          tokens = new Set(ids);
        })
        .catch(deps.onError);
    return undefined;
  });

  return {
    open(exchange) {
      const { caller } = exchange;
      if (!tokens.has(caller.token.id) && !groupsOn().has(caller.group)) return undefined;
      return ContentCapture.start(deps.sink, exchange, deps.options.get('ContentLogMaxBytes'));
    },
    async load() {
      tokens = new Set(await repo.tokensOn());
    },
    close: unsubscribe,
  };
}
