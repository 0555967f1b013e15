/**
 * A keyed work queue in the client-go model: a key is queued at most once, never processed by two workers at
 * once (a key added while it is processed is processed again afterwards), failures come back after a capped
 * exponential backoff, and a handler may ask to be called again after a delay.
 */

/** What a handler answers: nothing (done), or when to look again. */
export type WorkResult = undefined | { readonly requeueAfterMs: number };

export interface WorkQueueOptions {
  readonly concurrency?: number;
  /** First retry delay after a failure; doubles per failure of the same key. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Told the number of keys waiting (queued or delayed) whenever it changes. */
  readonly onDepth?: (depth: number) => void;
  /** Told about each processed key: ok, failed (retried later) or requeued on purpose, and how long it took. */
  readonly onDone?: (
    key: string,
    result: 'success' | 'error' | 'requeue',
    seconds: number,
    error?: unknown,
  ) => void;
}

export interface WorkQueue {
  add(key: string): void;
  addAfter(key: string, delayMs: number): void;
  /** Waiting keys (queued or delayed), not counting those being processed. */
  depth(): number;
  /** Whether nothing is queued, delayed or being processed. */
  idle(): boolean;
  start(): void;
  /** Stops taking keys and waits for the running handlers. */
  stop(): Promise<void>;
}

export function createWorkQueue(
  handler: (key: string) => Promise<WorkResult>,
  options: WorkQueueOptions = {},
): WorkQueue {
  const concurrency = options.concurrency ?? 4;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const queue: string[] = [];
  const queued = new Set<string>();
  const processing = new Set<string>();
  const dirty = new Set<string>();
  const delayed = new Map<string, NodeJS.Timeout>();
  const failures = new Map<string, number>();
  let running = 0;
  let started = false;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();

  const depth = () => queue.length + delayed.size;
  const report = () => options.onDepth?.(depth());

  function add(key: string): void {
    if (stopped) return;
    const timer = delayed.get(key);
    if (timer) {
      clearTimeout(timer);
      delayed.delete(key);
    }
    if (processing.has(key)) dirty.add(key);
    else if (!queued.has(key)) {
      queued.add(key);
      queue.push(key);
    }
    report();
    pump();
  }

  function addAfter(key: string, delayMs: number): void {
    if (stopped || queued.has(key)) return;
    const existing = delayed.get(key);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      delayed.delete(key);
      add(key);
    }, delayMs);
    timer.unref();
    delayed.set(key, timer);
    report();
  }

  function pump(): void {
    while (started && !stopped && running < concurrency && queue.length > 0) {
      const key = queue.shift() as string;
      queued.delete(key);
      processing.add(key);
      running += 1;
      report();
      const job = run(key).finally(() => {
        inFlight.delete(job);
        running -= 1;
        processing.delete(key);
        if (dirty.delete(key)) add(key);
        pump();
      });
      inFlight.add(job);
    }
  }

  async function run(key: string): Promise<void> {
    const startedAt = performance.now();
    try {
      const result = await handler(key);
      const seconds = (performance.now() - startedAt) / 1000;
      failures.delete(key);
      if (result && result.requeueAfterMs >= 0) {
        options.onDone?.(key, 'requeue', seconds);
        addAfter(key, result.requeueAfterMs);
      } else options.onDone?.(key, 'success', seconds);
    } catch (error) {
      const seconds = (performance.now() - startedAt) / 1000;
      const count = (failures.get(key) ?? 0) + 1;
      failures.set(key, count);
      options.onDone?.(key, 'error', seconds, error);
      addAfter(key, Math.min(baseDelayMs * 2 ** (count - 1), maxDelayMs));
    }
  }

  return {
    add,
    addAfter,
    depth,
    idle: () => queue.length === 0 && delayed.size === 0 && processing.size === 0,
    start() {
      started = true;
      pump();
    },
    async stop() {
      stopped = true;
      for (const timer of delayed.values()) clearTimeout(timer);
      delayed.clear();
      queue.length = 0;
      queued.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}
