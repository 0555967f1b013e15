/**
 * opencode itself (`opencode-ai`, a native binary) through a listening relay, offline: `opencode run` with its
 * whole config in OPENCODE_CONFIG_CONTENT, naming two providers at the relay with a Turnpike token as their key: an
 * OpenAI-compatible one (`@ai-sdk/openai-compatible`, `/v1/chat/completions`) and an Anthropic one
 * (`@ai-sdk/anthropic`, `/v1/messages`). Through the first to an OpenAI-compatible channel (passed through) and to
 * a Gemini channel (converted); through the second to an Anthropic channel (passed through). In each
 * the upstream asks for opencode's `bash` tool, opencode runs it in its scratch directory, and the output goes back.
 * Models list fetches, updates, sharing, default plugins and LSP downloads are off; the plugin package opencode
 * installs in its config directory at start is kept in .tools/opencode/config (make opencode puts it there), and
 * what it loads at run time in .tools/opencode/cache. Its outside traffic goes to a closed door: none is made.
 *
 * Kept out of the dev dependencies: `make opencode-test` installs it under .tools/opencode and runs this file;
 * without it (or `OPENCODE_BIN`) the file is skipped, saying why.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
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

const ROOT = path.resolve(import.meta.dirname, '../..');
const opencode = findAgentCli({
  name: 'opencode',
  env: 'OPENCODE_BIN',
  tool: 'opencode/node_modules/.bin/opencode',
  make: 'opencode-test',
});
/** Where opencode keeps the packages it loads at run time, across runs. */
const CACHE = path.join(ROOT, '.tools/opencode/cache');
const CONFIG = path.join(ROOT, '.tools/opencode/config');

const ANTHROPIC_KEY = 'sk-ant-api03-opencode-upstream';
const GEMINI_KEY = 'AIzaSy-opencode-upstream';
const PROOF = 'turnpike-opencode-proof';
const TOOL_CALL = {
  name: 'bash',
  args: { command: `echo ${PROOF} | tee proof.txt`, description: 'Write the proof file' },
};
const MODELS = ['oc-openai', 'oc-gemini', 'oc-claude'];

let t: RelayTestApp;
let providers: FakeProviders;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let door: Awaited<ReturnType<typeof startClosedDoor>>;
let key: string;

const configOf = () => ({
  $schema: 'https://opencode.ai/config.json',
  autoupdate: false,
  share: 'disabled',
  permission: { bash: 'allow', edit: 'allow', external_directory: 'deny' },
  provider: {
    turnpike: {
      npm: '@ai-sdk/openai-compatible',
      name: 'Turnpike',
      options: { baseURL: `${proxy.url}/v1`, apiKey: key },
      models: Object.fromEntries(MODELS.map((model) => [model, { name: model, tool_call: true }])),
    },
    'turnpike-anthropic': {
      npm: '@ai-sdk/anthropic',
      name: 'Turnpike (Anthropic)',
      options: { baseURL: `${proxy.url}/v1`, apiKey: key },
      models: { 'oc-claude': { name: 'oc-claude', tool_call: true } },
    },
  },
});

function runOpencode(model: string, prompt: string) {
  return runAgent(
    opencode.bin as string,
    ['run', '--model', model, prompt],
    {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(configOf()),
      ...throughClosedDoor(door.url),
      OPENCODE_DISABLE_MODELS_FETCH: 'true',
      OPENCODE_DISABLE_AUTOUPDATE: 'true',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
      OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
      OPENCODE_DISABLE_SHARE: 'true',
      OPENCODE_DISABLE_CLAUDE_CODE: 'true',
      OPENCODE_DISABLE_PROJECT_CONFIG: 'true',
      OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: 'true',
      XDG_CACHE_HOME: CACHE,
      // Its config directory holds the plugin package opencode installs there at start (make opencode puts it
      // there), so a run does not fetch it.
      XDG_CONFIG_HOME: CONFIG,
      XDG_DATA_HOME: '{home}/.local/share',
      XDG_STATE_HOME: '{home}/.local/state',
      NO_COLOR: '1',
      CI: '1',
    },
    45_000,
  );
}

/** Every request opencode made for `model`: none refused. */
function expectNoRefusals(model: string): RecordedCall[] {
  const made = proxy.calls.filter((entry) => entry.body.model === model);
  expect(made.length).toBeGreaterThan(0);
  for (const entry of made) expect(`${entry.method} ${entry.path} ${entry.status}`).toMatch(/ 200$/);
  return made;
}

describeAgent(opencode, 'opencode through the relay', () => {
  beforeAll(async () => {
    providers = await startFakeProviders();
    t = await createRelayTestApp();
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify(Object.fromEntries(MODELS.map((model) => [model, 1]))),
    );
    await t.seedChannel({ key: 'sk-compat-oc', baseUrl: providers.url, models: 'oc-openai' });
    await t.seedChannel({ key: ANTHROPIC_KEY, baseUrl: providers.url, models: 'oc-claude', type: 14 });
    await t.seedChannel({ key: GEMINI_KEY, baseUrl: providers.url, models: 'oc-gemini', type: 24 });
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

  for (const [model, upstream, clientPath] of [
    ['turnpike/oc-openai', 'an OpenAI-compatible channel (passed through)', '/v1/chat/completions'],
    ['turnpike/oc-gemini', 'a Gemini channel (converted)', '/v1/chat/completions'],
    ['turnpike-anthropic/oc-claude', 'an Anthropic channel (passed through)', '/v1/messages'],
  ] as const) {
    // One at a time: opencode instances started together wait for each other (a minute for four). Three runs
    // cover the three channel formats and both of opencode's providers; chat → Anthropic conversion is the Gemini
    // CLI's and Codex's to prove.
    it(`runs bash on a call from ${upstream}, as ${model}, and sends the output back`, async () => {
      const name = model.split('/')[1] as string;
      const run = await runOpencode(model, 'Write the proof file, then say done.');
      process.stdout.write(`opencode run ${model}: exit ${run.code} in ${run.ms} ms\n`);
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      expect(readFileSync(path.join(run.dir, 'proof.txt'), 'utf8')).toBe(`${PROOF}\n`);
      expect(run.stdout).toContain(DEFAULT_PROVIDER_BEHAVIOUR.reply);
      const made = expectNoRefusals(name).filter((entry) => entry.path.startsWith(clientPath));
      expect(made.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(made.at(-1)!.body)).toContain(PROOF);
      const up = providers.requests.filter(
        (request) => request.body.model === name || request.path.includes(`/${name}:`),
      );
      expect(JSON.stringify(up.at(-1)?.body)).toContain(PROOF);
      const upstreamPath: Record<string, string> = {
        'oc-openai': '/v1/chat/completions',
        'oc-gemini': '/v1beta/models/oc-gemini:streamGenerateContent',
        'oc-claude': '/v1/messages',
      };
      expect(up.at(-1)?.path).toBe(upstreamPath[name]);
      const rows = await waitFor(async () => {
        const found = await t.runtime.deps.db.select().from(logs).where(eq(logs.modelName, name));
        return found.length > 0 ? found : undefined;
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
