/**
 * Codex itself (the native binary of `@openai/codex`) through a listening relay, offline: `codex exec` with a
 * scratch CODEX_HOME whose config.toml names a model provider at the relay (Responses wire API, the key a Turnpike
 * token), to an OpenAI channel (passed through), an Anthropic channel and a Gemini channel (converted). In each, the
 * upstream asks for Codex's `exec_command` tool, Codex runs it in its scratch directory, the output goes back up and
 * the final answer is printed. Codex sends `namespace` tools and the hosted `web_search` tool on every turn: the
 * converted upstreams get them flat and as their own search tool (docs/adr/0029). Outside traffic goes to a closed
 * door (HTTPS_PROXY): with plugins, apps and updates off, none is made.
 *
 * The binary is large, so it is kept out of the dev dependencies: `make codex-test` installs it under .tools/codex
 * and runs this file; without it (or `CODEX_BIN`) the file is skipped, saying why.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { DEFAULT_FAKE_BEHAVIOUR, type FakeOpenAi, startFakeOpenAi } from './testing/fake-openai.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';

const _ROOT = path.resolve(import.meta.dirname, '../..');
const codex = findAgentCli({
  name: 'Codex',
  env: 'CODEX_BIN',
  tool: 'codex/node_modules/.bin/codex',
  make: 'codex-test',
});

const OPENAI_KEY = 'sk-proj-codex-upstream-key';
const ANTHROPIC_KEY = 'sk-ant-api03-codex-upstream';
const GEMINI_KEY = 'AIzaSy-codex-upstream';
const PROOF = 'turnpike-codex-proof';
const TOOL_CALL = { name: 'exec_command', args: { cmd: `echo ${PROOF} | tee proof.txt` } };

let t: RelayTestApp;
let fake: FakeOpenAi;
let providers: FakeProviders;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let door: Awaited<ReturnType<typeof startClosedDoor>>;
let key: string;

/** The config.toml of a scratch CODEX_HOME: one model provider, the relay, its key in TURNPIKE_API_KEY. */
const configToml = (gateway: string, model: string) =>
  [
    `model = "${model}"`,
    'model_provider = "turnpike"',
    'approval_policy = "never"',
    'check_for_update_on_startup = false',
    '[analytics]',
    'enabled = false',
    // Plugins, apps and in-app updates sync from GitHub and chatgpt.com at start: off, so nothing leaves.
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'plugin_sharing = false',
    'apps = false',
    'in_app_updates = false',
    'skill_mcp_dependency_install = false',
    '[model_providers.turnpike]',
    'name = "Turnpike"',
    `base_url = "${gateway}/v1"`,
    'env_key = "TURNPIKE_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');

/**
 * Codex with its built-in OpenAI provider at the relay instead (`openai_base_url`, the key in CODEX_API_KEY), as
 * many set a gateway up: it then compacts with "remote compaction v2" (a turn ending in `compaction_trigger`),
 * here as soon as a turn passes 9,000 tokens.
 */
const openAiProviderToml = (gateway: string, model: string) =>
  configToml(gateway, model)
    .replace('model_provider = "turnpike"', `openai_base_url = "${gateway}/v1"\nforced_login_method = "api"`)
    .replace('approval_policy', 'model_auto_compact_token_limit = 9000\napproval_policy');

function runCodex(model: string, prompt: string, toml = configToml) {
  return runAgent(
    codex.bin as string,
    [
      'exec',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--color',
      'never',
      '--cd',
      '{dir}',
      prompt,
    ],
    {
      CODEX_HOME: '{home}/.codex',
      TURNPIKE_API_KEY: key,
      CODEX_API_KEY: key,
      NO_COLOR: '1',
      ...throughClosedDoor(door.url),
    },
    50_000,
    ({ home }) => {
      mkdirSync(path.join(home, '.codex'));
      writeFileSync(path.join(home, '.codex/config.toml'), toml(proxy.url, model));
    },
  );
}

/** Every request Codex made since `from`: none refused. */
function expectNoRefusals(from: number): RecordedCall[] {
  const made = proxy.calls.slice(from);
  expect(made.length).toBeGreaterThan(0);
  for (const entry of made) expect(`${entry.method} ${entry.path} ${entry.status}`).toMatch(/ 200$/);
  return made;
}

describeAgent(codex, 'Codex through the relay', () => {
  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: OPENAI_KEY });
    providers = await startFakeProviders();
    t = await createRelayTestApp();
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify({ 'cx-openai': 1, 'cx-anthropic': 1, 'cx-gemini': 1 }),
    );
    await t.seedChannel({ key: OPENAI_KEY, baseUrl: fake.url, models: 'cx-openai' });
    await t.seedChannel({ key: ANTHROPIC_KEY, baseUrl: providers.url, models: 'cx-anthropic', type: 14 });
    await t.seedChannel({ key: GEMINI_KEY, baseUrl: providers.url, models: 'cx-gemini', type: 24 });
    const relay = await t.startRelay();
    door = await startClosedDoor();
    proxy = await startRecordingProxy(new URL(await relay.listen({ port: 0, host: '127.0.0.1' })));
    const user = await t.seedUser({ quota: 50_000_000 });
    key = `sk-${(await t.seedToken(user.id)).key}`;
    fake.setBehaviour({ responsesToolCall: TOOL_CALL });
    providers.setBehaviour({ toolCall: TOOL_CALL });
  });

  afterAll(async () => {
    await proxy?.close();
    await door?.close();
    await t?.close();
    await Promise.all([fake?.close(), providers?.close()]);
  });

  for (const [model, upstream] of [
    ['cx-openai', 'an OpenAI channel (passed through)'],
    ['cx-anthropic', 'an Anthropic channel (converted)'],
    ['cx-gemini', 'a Gemini channel (converted)'],
  ] as const) {
    it(`runs exec_command on a call from ${upstream}, sends its output back and prints the answer`, async () => {
      const from = proxy.calls.length;
      const run = await runCodex(model, 'Write the proof file, then say done.');
      process.stdout.write(`codex exec ${model}: exit ${run.code} in ${run.ms} ms\n`);
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(path.join(run.dir, 'proof.txt'), 'utf8')).toBe(`${PROOF}\n`);
      const reply = model === 'cx-openai' ? DEFAULT_FAKE_BEHAVIOUR.reply : DEFAULT_PROVIDER_BEHAVIOUR.reply;
      expect(run.stdout).toContain(reply);
      const made = expectNoRefusals(from).filter((entry) => entry.path === '/v1/responses');
      expect(made.length).toBeGreaterThanOrEqual(2);
      const first = made[0]!;
      expect(first.headers.authorization).toBe(`Bearer ${key}`);
      const tools = first.body.tools as { type: string; name?: string }[];
      expect(tools.some((tool) => tool.type === 'namespace')).toBe(true);
      expect(tools.some((tool) => tool.type === 'web_search')).toBe(true);
      // The second turn carries the command's output back as Codex wrote it.
      const outputs = (made.at(-1)!.body.input as { type: string; output?: unknown }[]).filter(
        (item) => item.type === 'function_call_output',
      );
      expect(JSON.stringify(outputs)).toContain(PROOF);

      if (model === 'cx-openai') {
        const up = fake.requests.filter((request) => request.path === '/v1/responses').at(-1)!;
        expect(up.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
        expect(JSON.stringify(up.body)).toContain(PROOF);
        // Passed through: Codex's own tools, namespace and web search included, as it sent them.
        expect((up.body as { tools: unknown[] }).tools).toEqual(made.at(-1)!.body.tools);
      } else {
        const up = providers.requests.at(-1)!;
        expect(JSON.stringify(up.body)).toContain(PROOF);
        const sent = JSON.stringify(up.body.tools);
        const namespace = tools.find((tool) => tool.type === 'namespace')!;
        expect(sent).toContain(`"${namespace.name}__`);
        if (model === 'cx-anthropic') {
          expect(up.path).toBe('/v1/messages');
          expect(up.headers['x-api-key']).toBe(ANTHROPIC_KEY);
          expect(sent).toContain('"type":"web_search_20250305"');
        } else {
          expect(up.path).toBe('/v1beta/models/cx-gemini:streamGenerateContent');
          expect(sent).toContain('"googleSearch":{}');
        }
      }
      const rows = await waitFor(async () => {
        const found = await t.runtime.deps.db.select().from(logs).where(eq(logs.modelName, model));
        return found.length >= made.length ? found : undefined;
      });
      for (const row of rows) expect(row.quota).toBeGreaterThan(0);
      rmSync(run.dir, { recursive: true, force: true });
    }, 60_000);
  }

  it("compacts its context on an Anthropic channel: remote compaction v2 through Codex's OpenAI provider", async () => {
    // One tool call, then answers: the compacted turn finishes instead of calling again.
    providers.setBehaviour({ toolCall: TOOL_CALL, toolCallLimit: 1 });
    const from = proxy.calls.length;
    const run = await runCodex('cx-anthropic', 'Write the proof file, then say done.', openAiProviderToml);
    process.stdout.write(
      `codex exec cx-anthropic (OpenAI provider, compacting): exit ${run.code} in ${run.ms} ms\n`,
    );
    providers.setBehaviour({ toolCall: TOOL_CALL, toolCallLimit: undefined });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path.join(run.dir, 'proof.txt'), 'utf8')).toBe(`${PROOF}\n`);
    expect(`${run.stdout}${run.stderr}`).toContain('context compacted');
    const turns = proxy.calls.slice(from).filter((entry) => entry.method === 'POST');
    for (const entry of turns) expect(`${entry.path} ${entry.status}`).toBe('/v1/responses 200');
    const inputOf = (entry: RecordedCall) =>
      entry.body.input as { type?: string; encrypted_content?: string }[];
    expect(turns.some((entry) => inputOf(entry).at(-1)?.type === 'compaction_trigger')).toBe(true);
    // The relay's compaction item comes back at the head of the next turn, and the channel reads the summary.
    const after = turns.find((entry) =>
      inputOf(entry).some(
        (item) => item.type === 'compaction' && item.encrypted_content?.startsWith('turnpike.'),
      ),
    );
    expect(after).toBeDefined();
    expect(JSON.stringify(providers.requests.at(-1)?.body)).toContain('compacted by the gateway');
    rmSync(run.dir, { recursive: true, force: true });
  }, 60_000);

  it('reaches for no network but the relay', () => {
    process.stdout.write(`outside attempts: ${JSON.stringify(door.attempts)}\n`);
    expect(door.attempts).toEqual([]);
  });
});
