/**
 * Runs the fake OpenAI upstream on its own, for `make bench` and manual tries:
 * `node relay/src/testing/fake-openai-main.ts --port 8081 [--chunk-delay-ms 5] [--first-token-delay-ms 50]
 * [--headers-delay-ms 0] [--no-usage]`. Prints its URL on stdout; stops on SIGINT / SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startFakeOpenAi } from './fake-openai.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8081' },
    'chunk-delay-ms': { type: 'string', default: '0' },
    'first-token-delay-ms': { type: 'string', default: '0' },
    'headers-delay-ms': { type: 'string', default: '0' },
    'no-usage': { type: 'boolean', default: false },
  },
});

const number = (name: string, value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be a whole number ≥ 0`);
  return parsed;
};

const fake = await startFakeOpenAi(
  {
    chunkDelayMs: number('chunk-delay-ms', values['chunk-delay-ms']),
    firstTokenDelayMs: number('first-token-delay-ms', values['first-token-delay-ms']),
    headersDelayMs: number('headers-delay-ms', values['headers-delay-ms']),
    omitUsage: values['no-usage'],
  },
  number('port', values.port),
);
// Long benchmark runs must not grow memory with recorded requests.
fake.setRecording(false);
process.stdout.write(`fake OpenAI upstream listening on ${fake.url}\n`);

const stop = () => {
  fake.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
