/**
 * List, then watch from the list's resourceVersion, keeping a cache of the objects. A watch that ends normally
 * (server timeout, dropped connection) resumes from the last resourceVersion seen; 410 Gone re-lists (and
 * reports objects that vanished meanwhile as deleted); any other failure restarts from a re-list after a
 * capped exponential backoff, reset by the first event after a successful start. Informers only tell keys to the
 * work queue; reconciles read the cache.
 */
import type { ObjectMeta } from '../api/v1alpha1.ts';
import type { KubeList, WatchEventType } from '../kube/client.ts';

export interface InformerOptions<T extends { metadata: ObjectMeta }> {
  readonly name: string;
  readonly list: () => Promise<KubeList<T>>;
  readonly watch: (
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: unknown) => void,
    done: (error: unknown) => void,
  ) => Promise<() => void>;
  readonly keyOf: (object: T) => string;
  /** Something about this key changed (object is undefined when it was deleted). */
  readonly onChange: (key: string, object: T | undefined) => void;
  /** A failure that made the informer restart (counted as a watch restart). */
  readonly onRestart?: (reason: 'gone' | 'error', error?: unknown) => void;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export interface Informer<T> {
  start(): void;
  stop(): void;
  /** Whether the first list has completed. */
  synced(): boolean;
  get(key: string): T | undefined;
  list(): T[];
}

/** 410 Gone from the API server, as an HTTP status or as an ERROR event. */
function isGone(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: number; statusCode?: number; status?: number; message?: string };
  return (
    e.code === 410 ||
    e.statusCode === 410 ||
    e.status === 410 ||
    /\b410\b|Gone|Expired/.test(String(e.message ?? ''))
  );
}

export function createInformer<T extends { metadata: ObjectMeta }>(options: InformerOptions<T>): Informer<T> {
  const minBackoffMs = options.minBackoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const cache = new Map<string, T>();
  let resourceVersion = '';
  let synced = false;
  let stopped = true;
  let stopWatch: (() => void) | undefined;
  let backoff = minBackoffMs;
  let timer: NodeJS.Timeout | undefined;
  let generation = 0; // bumps on every (re)start, so callbacks of an older stream are ignored

  function upsert(object: T): void {
    const key = options.keyOf(object);
    const before = cache.get(key);
    cache.set(key, object);
    if (before?.metadata.resourceVersion !== object.metadata.resourceVersion) options.onChange(key, object);
  }

  async function relist(): Promise<void> {
    const list = await options.list();
    const seen = new Set<string>();
    for (const item of list.items) {
      seen.add(options.keyOf(item));
      upsert(item);
    }
    for (const key of [...cache.keys()])
      if (!seen.has(key)) {
        cache.delete(key);
        options.onChange(key, undefined);
      }
    resourceVersion = list.resourceVersion;
    synced = true;
  }

  function schedule(run: () => void, delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
  }

  function restart(reason: 'gone' | 'error', error?: unknown): void {
    options.onRestart?.(reason, error);
    const delay = reason === 'gone' ? 0 : backoff;
    if (reason === 'error') backoff = Math.min(backoff * 2, maxBackoffMs);
    schedule(() => void begin(), delay);
  }

  async function watchFrom(): Promise<void> {
    const mine = generation;
    let failed = false;
    stopWatch = await options.watch(
      resourceVersion,
      (type, raw) => {
        if (mine !== generation) return;
        const object = raw as T;
        if (type === 'ERROR') {
          failed = true;
          stopWatch?.();
          const status = raw as { code?: number; message?: string };
          if (status?.code === 410) restart('gone');
          else restart('error', new Error(status?.message ?? 'watch error'));
          return;
        }
        backoff = minBackoffMs;
        if (object?.metadata?.resourceVersion) resourceVersion = object.metadata.resourceVersion;
        if (type === 'BOOKMARK') return;
        if (type === 'DELETED') {
          const key = options.keyOf(object);
          cache.delete(key);
          options.onChange(key, undefined);
        } else upsert(object);
      },
      (error) => {
        if (mine !== generation || failed || stopped) return;
        if (!error) {
          // Closed normally: resume from where we were, no re-list.
          schedule(() => void resume(), 0);
          return;
        }
        if (isGone(error)) restart('gone');
        else if (String((error as Error).name) === 'TimeoutError' || /aborted|timeout/i.test(String(error)))
          schedule(() => void resume(), 0);
        else restart('error', error);
      },
    );
  }

  async function resume(): Promise<void> {
    if (stopped) return;
    generation += 1;
    try {
      await watchFrom();
    } catch (error) {
      if (isGone(error)) restart('gone');
      else restart('error', error);
    }
  }

  async function begin(): Promise<void> {
    if (stopped) return;
    generation += 1;
    stopWatch?.();
    stopWatch = undefined;
    try {
      await relist();
      await watchFrom();
    } catch (error) {
      options.onRestart?.('error', error);
      const delay = backoff;
      backoff = Math.min(backoff * 2, maxBackoffMs);
      schedule(() => void begin(), delay);
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      void begin();
    },
    stop() {
      stopped = true;
      generation += 1;
      if (timer) clearTimeout(timer);
      stopWatch?.();
      stopWatch = undefined;
    },
    synced: () => synced,
    get: (key) => cache.get(key),
    list: () => [...cache.values()],
  };
}
