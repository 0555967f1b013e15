/** The part of autocannon's API that bench/run.ts uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds; ignored when `amount` is set. */
    duration?: number;
    /** Stop after this many requests. */
    amount?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
  }

  interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    duration: number;
    requests: { total: number; average: number; sent: number };
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
    ): this;
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
