/**
 * The periodic channel test (`CHANNEL_TEST_FREQUENCY` minutes, reference §4.7): a round every `everyMs`, the
 * first one `everyMs` after the start, never two at once in this process. Stopping aborts the round in progress
 * (its signal) and waits for it to wind down, so the caller can close the database afterwards.
 *
 * Which process runs it is the caller's decision (the console API's process, never a relay-only pod); the round
 * itself decides whether another replica already ran this period (see the channel-test service).
 */

export interface TestLoop {
  /** Stops the timer, aborts a round in progress and waits for it to end. */
  stop(): Promise<void>;
  /** Rounds started so far. */
  readonly rounds: number;
}

export function startTestLoop(options: {
  everyMs: number;
  /** One round; `signal` aborts when the loop stops. Failures go to `onError`, the next round runs anyway. */
  run: (signal: AbortSignal) => Promise<void>;
  onError?: (error: unknown) => void;
}): TestLoop {
  const { everyMs, run, onError = () => {} } = options;
  if (!(everyMs > 0)) throw new RangeError(`the test loop interval must be above 0 ms, got ${everyMs}`);
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let rounds = 0;

  const timer = setInterval(() => {
    if (running || stopping.signal.aborted) return;
    rounds += 1;
    running = run(stopping.signal)
      .catch((error: unknown) => {
        if (!stopping.signal.aborted) onError(error);
      })
      .finally(() => {
        running = undefined;
      });
  }, everyMs);
  timer.unref();

  return {
    get rounds() {
      return rounds;
    },
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await running;
    },
  };
}
