/**
 * Gemini CLI itself (`@google/gemini-cli`) through a listening relay, offline: `gemini -p` with
 * `GOOGLE_GEMINI_BASE_URL` at the relay (with the API-key sign-in) and `GEMINI_API_KEY` a Turnpike token, HOME a scratch
 * directory whose settings turn usage statistics, telemetry and update checks off. To a Gemini channel (passed
 * through) and to OpenAI-compatible and Anthropic channels (converted); in each the upstream asks for the CLI's
 * `run_shell_command` tool, the CLI runs it (`--yolo`) in its scratch directory, and the output goes back up.
 * Outside traffic goes to a closed door (HTTPS_PROXY): none is made.
 *
 * Kept out of the dev dependencies: `make gemini-cli-test` installs it under .tools/gemini-cli and runs this file;
 * without it (or `GEMINI_CLI_BIN`) the file is skipped, saying why.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_CHANNEL_AFFINITY } from '@turnpike/core/channels/affinity-rules';
import { logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sessionOf } from './routing/affinity.ts';
import {
  describeAgent,
  findAgentCli,
  type RecordedCall,
  runAgent,
  startClosedDoor,
  startRecordingProxy,
  throughClosedDoor,
} from './testing/agent-run.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';

const _ROOT = path.resolve(import.meta.dirname, '../..');
const gemini = findAgentCli({
  name: 'Gemini CLI',
  env: 'GEMINI_CLI_BIN',
  tool: 'gemini-cli/node_modules/.bin/gemini',
  make: 'gemini-cli-test',
});

const GEMINI_KEY = 'AIzaSy-gemini-cli-upstream';
const ANTHROPIC_KEY = 'sk-ant-api03-gemini-cli-upstream';
const PROOF = 'turnpike-gemini-cli-proof';
const TOOL_CALL = {
  name: 'run_shell_command',
  args: { command: `echo ${PROOF} | tee proof.txt`, description: 'Write the proof file' },
};

let t: RelayTestApp;
let providers: FakeProviders;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let door: Awaited<ReturnType<typeof startClosedDoor>>;
let key: string;

/** ~/.gemini/settings.json: nothing leaves for Google (statistics, telemetry, update checks off). */
const SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
  // The API-key sign-in, its requests sent to GOOGLE_GEMINI_BASE_URL (the "gateway" sign-in is not accepted by -p).
  security: { auth: { selectedType: 'gemini-api-key' } },
  ide: { enabled: false },
};

function runGemini(model: string, prompt: string) {
  return runAgent(
    gemini.bin as string,
    ['-p', prompt, '-m', model, '--yolo', '--output-format', 'json'],
    {
      GOOGLE_GEMINI_BASE_URL: proxy.url,
      ...throughClosedDoor(door.url),
      GEMINI_API_KEY: key,
      GEMINI_CLI_NO_RELAUNCH: 'true',
      // The scratch directory is trusted, so --yolo runs the shell tool without asking.
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      NO_BROWSER: 'true',
      CI: '1',
    },
    50_000,
    ({ home }) => {
      mkdirSync(path.join(home, '.gemini'));
      writeFileSync(path.join(home, '.gemini/settings.json'), JSON.stringify(SETTINGS));
    },
  );
}

/** Every request the CLI made since `from`: none refused. */
function expectNoRefusals(from: number): RecordedCall[] {
  const made = proxy.calls.slice(from);
  expect(made.length).toBeGreaterThan(0);
  for (const entry of made) expect(`${entry.method} ${entry.path} ${entry.status}`).toMatch(/ 200$/);
  return made;
}

describeAgent(gemini, 'Gemini CLI through the relay', () => {
  beforeAll(async () => {
    providers = await startFakeProviders();
    t = await createRelayTestApp();
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify({ 'gm-gemini': 1, 'gm-openai': 1, 'gm-anthropic': 1 }),
    );
    await t.seedChannel({ key: GEMINI_KEY, baseUrl: providers.url, models: 'gm-gemini', type: 24 });
    await t.seedChannel({ key: 'sk-compat-gm', baseUrl: providers.url, models: 'gm-openai' });
    await t.seedChannel({ key: ANTHROPIC_KEY, baseUrl: providers.url, models: 'gm-anthropic', type: 14 });
    const relay = await t.startRelay();
    door = await startClosedDoor();
    proxy = await startRecordingProxy(new URL(await relay.listen({ port: 0, host: '127.0.0.1' })));
    const user = await t.seedUser({ quota: 50_000_000 });
    key = `sk-${(await t.seedToken(user.id)).key}`;
    providers.setBehaviour({ toolCall: TOOL_CALL });
  });

  afterAll(async () => {
    await proxy?.close();
    await door?.close();
    await t?.close();
    await providers?.close();
  });

  for (const [model, upstream] of [
    ['gm-gemini', 'a Gemini channel (passed through)'],
    ['gm-openai', 'an OpenAI-compatible channel (converted)'],
    ['gm-anthropic', 'an Anthropic channel (converted)'],
  ] as const) {
    it(`runs run_shell_command on a call from ${upstream} and sends the output back`, async () => {
      const from = proxy.calls.length;
      const run = await runGemini(model, 'Write the proof file, then say done.');
      process.stdout.write(`gemini -p ${model}: exit ${run.code} in ${run.ms} ms\n`);
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      expect(readFileSync(path.join(run.dir, 'proof.txt'), 'utf8')).toBe(`${PROOF}\n`);
      const answer = JSON.parse(run.stdout) as { response: string };
      expect(answer.response).toContain(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      const made = expectNoRefusals(from).filter((entry) => entry.path.includes(':'));
      expect(made.length).toBeGreaterThanOrEqual(2);
      expect(made[0]!.path).toMatch(new RegExp(`^/v1beta/models/${model}:streamGenerateContent`));
      expect(made[0]!.headers['x-goog-api-key']).toBe(key);
      // The default affinity rules keep its calls on one channel (it names no session of its own).
      const first = { url: made[0]!.path, headers: made[0]!.headers };
      expect(
        sessionOf(DEFAULT_CHANNEL_AFFINITY.rules, first, made[0]!.body)?.rule,
        String(first.headers['user-agent']),
      ).toBe('gemini-cli');
      // The second turn carries the command's output back as the CLI wrote it.
      expect(JSON.stringify(made.at(-1)!.body.contents)).toContain(PROOF);
      const up = providers.requests.at(-1)!;
      expect(JSON.stringify(up.body)).toContain(PROOF);
      if (model === 'gm-gemini') {
        expect(up.path).toBe('/v1beta/models/gm-gemini:streamGenerateContent');
        expect(up.headers['x-goog-api-key']).toBe(GEMINI_KEY);
      } else if (model === 'gm-anthropic') {
        expect(up.path).toBe('/v1/messages');
        expect(up.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      } else {
        expect(up.path).toBe('/v1/chat/completions');
      }
      const rows = await waitFor(async () => {
        const found = await t.runtime.deps.db.select().from(logs).where(eq(logs.modelName, model));
        return found.length >= made.length ? found : undefined;
      });
      for (const row of rows) expect(row.quota).toBeGreaterThan(0);
      rmSync(run.dir, { recursive: true, force: true });
    }, 60_000);
  }

  it('reaches for no network but the relay', () => {
    process.stdout.write(`outside attempts: ${JSON.stringify(door.attempts)}\n`);
    expect(door.attempts).toEqual([]);
  });
});
