/**
 * Streams as a client sees them, for `make bench`: each stream's time to first token (from sending the request to
 * the first frame that carries content) and the gaps between its frames, counted over many streams at once. A
 * frame is one SSE event (`data: ...` up to its blank line); comments (`: ...`) are not frames. autocannon sees only
 * whole responses, so this is plain `node:http` with an agent of its own that keeps every stream on a connection
 * of its own.
 */
import http from 'node:http';

export interface StreamStats {
  readonly streams: number;
  /** Streams that ended without `[DONE]`, with a status other than 200, or with an error. */
  readonly failed: number;
  /** Content frames received in all, and how many were expected (`expectedFrames` x streams). */
  readonly frames: number;
  readonly expectedFrames: number;
  /** Time to first token of every stream (ms), sorted. */
  readonly ttft: Float64Array;
  /** The longest gap between two content frames of each stream (ms), sorted. */
  readonly maxGaps: Float64Array;
  /** Streams open at once at the most. */
  readonly peakOpen: number;
  /** Why streams failed: a status other than 200, an error's message, or `cut` (no `[DONE]`), with their counts. */
  readonly failures: Record<string, number>;
}

/** Whether an SSE data line carries generated content (OpenAI chat chunk with a non-empty delta content). */
const CONTENT = /"content":"[^"]/;

/**
 * Opens `streams` streams, `concurrency` at a time (all at once when equal), each `POST url` with `body`.
 * `expectedFrames` is how many content frames each should carry (frames lost show as frames < expectedFrames).
 */
export async function probeStreams(options: {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  concurrency: number;
  expectedFrames: number;
  timeoutMs?: number;
}): Promise<StreamStats> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const ttft: number[] = [];
  const maxGaps: number[] = [];
  let failed = 0;
  let frames = 0;
  let open = 0;
  let peakOpen = 0;
  let next = 0;
  const failures: Record<string, number> = {};

  const one = () =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      let first = Number.NaN;
      let last = Number.NaN;
      let maxGap = 0;
      let done = false;
      let buffer = '';
      const fail = (why: string) => {
        failed += 1;
        failures[why] = (failures[why] ?? 0) + 1;
        resolve();
      };
      const request = http.request(
        options.url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', ...options.headers },
          timeout: options.timeoutMs ?? 60_000,
        },
        (response) => {
          open += 1;
          peakOpen = Math.max(peakOpen, open);
          if (response.statusCode !== 200) {
            open -= 1;
            response.resume();
            fail(`status ${response.statusCode}`);
            return;
          }
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            buffer += chunk;
            let end = buffer.indexOf('\n\n');
            while (end !== -1) {
              const event = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              end = buffer.indexOf('\n\n');
              if (!event.startsWith('data:')) continue;
              if (event.startsWith('data: [DONE]')) done = true;
              else if (CONTENT.test(event)) {
                const now = performance.now();
                if (!Number.isNaN(last)) maxGap = Math.max(maxGap, now - last);
                last = now;
                frames += 1;
                if (Number.isNaN(first)) first = now - sent;
              }
            }
          });
          response.on('end', () => {
            open -= 1;
            if (!done || Number.isNaN(first)) return fail('cut');
            ttft.push(first);
            maxGaps.push(maxGap);
            resolve();
          });
          response.on('error', (error) => {
            open -= 1;
            fail(error.message);
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', (error) => fail(error.message));
      request.end(options.body);
    });

  const worker = async () => {
    while (next < options.streams) {
      next += 1;
      await one();
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, options.streams) }, worker));
  agent.destroy();
  return {
    streams: options.streams,
    failed,
    frames,
    expectedFrames: options.expectedFrames * options.streams,
    ttft: Float64Array.from(ttft).sort(),
    maxGaps: Float64Array.from(maxGaps).sort(),
    peakOpen,
    failures,
  };
}
