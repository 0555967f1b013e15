/**
 * The writer of content logs (docs/adr/0045), apart from the batched writer of money (writer.ts): a bounded queue
 * the calls add to, flushed on an interval and at shutdown. The redaction rules run here, before anything is
 * written, then the call is cut to `ContentLogMaxBytes`. A content log is not money: a full queue drops what comes
 * (counted and reported), and a flush that fails is reported, not retried.
 */
import {
  capContent,
  createRedactor,
  type Redact,
  RedactionTimeout,
} from '@turnpike/core/content-logs/redaction';
import type { Db } from '@turnpike/core/db/client';
import type { NewContentLog } from '@turnpike/core/db/schema/content-logs';
import type { OptionStore } from '@turnpike/core/options/store';
import { createContentLogRepo } from '@turnpike/core/repos/content-log.repo';

/** One finished call as a capture hands it over: nothing redacted yet, the prompt maybe still an object. */
export interface PendingContent {
  readonly requestId: string;
  readonly userId: number;
  readonly tokenId: number;
  readonly model: string;
  readonly createdAt: number;
  /** The request's body as parsed, or the prompt's text. */
  readonly prompt: unknown;
  readonly answer: string;
  /** The capture already cut the answer. */
  readonly cut: boolean;
}

export interface ContentLogWriter {
  enqueue(content: PendingContent): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** How many calls a full queue dropped since the start. */
  dropped(): number;
  /** Stops the interval and writes what is left. */
  close(): Promise<void>;
}

/**
 * The prompt as JSON text, every string in it cut at `limit` characters first, so a request with megabytes of
 * base64 images is never turned into one huge string to be cut afterwards.
 */
function promptText(prompt: unknown, limit: number): string {
  if (typeof prompt === 'string') return prompt.length > limit ? prompt.slice(0, limit) : prompt;
  return JSON.stringify(prompt, (_key, value: unknown) =>
    typeof value === 'string' && value.length > limit ? value.slice(0, limit) : value,
  );
}

export function createContentLogWriter(deps: {
  readonly db: Db;
  readonly options: OptionStore;
  readonly intervalMs?: number;
  /** Calls waiting at most; past it new ones are dropped. */
  readonly maxQueued?: number;
  readonly onError: (error: unknown, context: string) => void;
}): ContentLogWriter {
  const repo = createContentLogRepo(deps.db);
  const maxQueued = deps.maxQueued ?? 2_000;
  let queue: PendingContent[] = [];
  let droppedCount = 0;
  let patternsText: string | undefined;
  let redact: Redact = createRedactor([]);
  let running: Promise<void> = Promise.resolve();

  function redactor(): Redact {
    const text = deps.options.getText('ContentLogRedactPatterns');
    if (text !== patternsText) {
      patternsText = text;
      redact = createRedactor(deps.options.get('ContentLogRedactPatterns'));
    }
    return redact;
  }

  function rowOf(content: PendingContent, maxBytes: number): NewContentLog | undefined {
    const limit = maxBytes + 1_024;
    const rules = redactor();
    try {
      const prompt = rules(promptText(content.prompt, limit));
      const answer = rules(content.answer);
      const capped = capContent(prompt.text, answer.text, maxBytes);
      return {
        requestId: content.requestId,
        userId: content.userId,
        tokenId: content.tokenId,
        createdAt: content.createdAt,
        modelName: content.model.slice(0, 255),
        prompt: capped.prompt,
        answer: capped.answer,
        truncated: capped.truncated || content.cut,
        redactions: prompt.count + answer.count,
      };
    } catch (error) {
      // Text a pattern could not finish on cannot be told clean: it is not kept at all.
      if (error instanceof RedactionTimeout) {
        deps.onError(error, `content log of request ${content.requestId} not kept`);
        return undefined;
      }
      throw error;
    }
  }

  async function writeQueued(): Promise<void> {
    if (queue.length === 0) return;
    const taken = queue;
    queue = [];
    const maxBytes = deps.options.get('ContentLogMaxBytes');
    const rows = taken.map((c) => rowOf(c, maxBytes)).filter((r): r is NewContentLog => r !== undefined);
    try {
      await repo.insertMany(rows);
    } catch (error) {
      deps.onError(error, `${rows.length} content logs not written`);
    }
  }

  function flush(): Promise<void> {
    running = running.then(writeQueued, writeQueued);
    return running;
  }

  const timer = setInterval(() => void flush(), deps.intervalMs ?? 1_000);
  timer.unref();

  return {
    enqueue(content) {
      if (queue.length >= maxQueued) {
        droppedCount += 1;
        if (droppedCount === 1 || droppedCount % 1_000 === 0)
          deps.onError(new Error(`${droppedCount} content logs dropped: the queue is full`), 'content logs');
        return;
      }
      queue.push(content);
    },
    flush,
    dropped: () => droppedCount,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
