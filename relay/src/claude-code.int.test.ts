/**
 * Claude Code itself (the `claude` native binary of `@anthropic-ai/claude-code`) through a listening relay, in
 * print mode, offline: against an OpenAI-compatible channel (converted) and an Anthropic channel (passed through),
 * with a plain answer, a `stream-json` session, and a turn where the upstream calls Claude Code's Bash tool, Claude
 * Code runs it in a scratch directory and sends the tool result back. A recording proxy in front of the relay keeps
 * every request Claude Code made, so the test can say none of them was refused.
 *
 * The binary is about 380 MB, too big for the root dev dependencies: `make claude-code-test` installs it under
 * .tools/claude-code and runs this file; without it (or `CLAUDE_CODE_BIN`) the file is skipped, saying why.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeAgent, findAgentCli, type RecordedCall, startRecordingProxy } from './testing/agent-run.ts';
import {
  DEFAULT_PROVIDER_BEHAVIOUR,
  type FakeProviders,
  startFakeProviders,
} from './testing/fake-providers.ts';
import { createRelayTestApp, type RelayTestApp } from './testing/relay-test-app.ts';
import { waitFor } from './testing/wait.ts';

const _ROOT = path.resolve(import.meta.dirname, '../..');
const claude = findAgentCli({
  name: 'Claude Code',
  env: 'CLAUDE_CODE_BIN',
  tool: 'claude-code/node_modules/.bin/claude',
  make: 'claude-code-test',
});

/** One request Claude Code made to the gateway, and the status it got. */
let t: RelayTestApp;
let providers: FakeProviders;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>> | undefined;
let gateway: string;
let key: string;
let recorded: RecordedCall[] = [];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly dir: string;
}

/** Runs `claude` in print mode in a scratch directory with a scratch home; resolves when it exits. */
function runClaude(
  args: readonly string[],
  model: string,
  extraEnv: Readonly<Record<string, string | undefined>> = {},
): Promise<Run> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnpike-cc-'));
  const home = mkdtempSync(path.join(tmpdir(), 'turnpike-cc-home-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmpdir(),
    ANTHROPIC_BASE_URL: gateway,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CI: '1',
    ...extraEnv,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(claude.bin as string, ['-p', ...args, '--model', model], { cwd: dir, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      resolve({ code, stdout, stderr, dir });
    });
  });
}

describeAgent(claude, 'Claude Code through the relay', () => {
  beforeAll(async () => {
    providers = await startFakeProviders();
    t = await createRelayTestApp();
    await t.runtime.deps.options.set(
      'ModelRatio',
      JSON.stringify({ 'cc-anthropic': 1, 'cc-openai': 1, 'cc-gemini': 1 }),
    );
    await t.seedChannel({ key: 'sk-ant-cc', baseUrl: providers.url, models: 'cc-anthropic', type: 14 });
    await t.seedChannel({ key: 'sk-compat-cc', baseUrl: providers.url, models: 'cc-openai' });
    await t.seedChannel({ key: 'AIza-cc', baseUrl: providers.url, models: 'cc-gemini', type: 24 });
    const relay = await t.startRelay();
    const address = await relay.listen({ port: 0, host: '127.0.0.1' });
    proxy = await startRecordingProxy(new URL(address));
    recorded = proxy.calls;
    gateway = proxy.url;
    const user = await t.seedUser({ quota: 50_000_000 });
    key = `sk-${(await t.seedToken(user.id)).key}`;
  });

  afterAll(async () => {
    await proxy?.close();
    await t?.close();
    await providers?.close();
  });

  /**
   * Every request Claude Code made since `from`: none refused. `HEAD /api/hello` is Claude Code's connection
   * warm-up (sent unless nonessential traffic is off): its answer is not read, and the relay has no such path.
   */
  const expectNoRefusals = (from: number) => {
    const made = recorded
      .slice(from)
      .filter((entry) => !(entry.method === 'HEAD' && entry.path === '/api/hello'));
    expect(made.length).toBeGreaterThan(0);
    for (const entry of made) expect(`${entry.method} ${entry.path} ${entry.status}`).toMatch(/ 200$/);
    return made;
  };

  for (const [model, upstream] of [
    ['cc-openai', 'an OpenAI-compatible channel (converted)'],
    ['cc-anthropic', 'an Anthropic channel (passed through)'],
    ['cc-gemini', 'a Gemini channel (converted)'],
  ] as const) {
    it(`answers claude -p --output-format json from ${upstream}`, async () => {
      providers.setBehaviour({ toolCall: { name: 'no-such-tool', args: {} } });
      const from = recorded.length;
      const run = await runClaude(['Say hello', '--output-format', 'json'], model);
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as {
        is_error: boolean;
        result: string;
        usage: { output_tokens: number };
      };
      expect(result).toMatchObject({ is_error: false, result: DEFAULT_PROVIDER_BEHAVIOUR.reply });
      expect(result.usage.output_tokens).toBeGreaterThan(0);
      const made = expectNoRefusals(from);
      const sent = made[0]!;
      // What Claude Code sends, and the relay has to take: its beta flags, a JSON user id, a system message in
      // the conversation, adaptive thinking, context management, a deferred tool.
      expect(sent.path).toBe('/v1/messages?beta=true');
      expect(String(sent.headers['anthropic-beta'])).toContain('claude-code-20250219');
      expect(sent.headers['x-api-key']).toBe(key);
      expect(sent.body).toMatchObject({ model, stream: true, metadata: { user_id: expect.any(String) } });
      const log = await waitFor(async () => {
        const rows = await t.runtime.deps.db.select().from(logs).where(eq(logs.modelName, model));
        return rows.length > 0 ? rows : undefined;
      });
      expect(log[0]?.quota).toBeGreaterThan(0);
      if (model === 'cc-anthropic') {
        const up = providers.requests.at(-1)!;
        expect(up.path).toBe('/v1/messages');
        expect(up.headers['anthropic-beta']).toBe(sent.headers['anthropic-beta']);
        expect(up.body.messages).toEqual(sent.body.messages);
      } else if (model === 'cc-gemini') {
        expect(providers.requests.at(-1)?.path).toBe('/v1beta/models/cc-gemini:streamGenerateContent');
      } else {
        expect(providers.requests.at(-1)?.path).toBe('/v1/chat/completions');
      }
    }, 60_000);

    it(`runs its Bash tool on a call from ${upstream} and sends the result back (stream-json)`, async () => {
      providers.setBehaviour({
        toolCall: {
          name: 'Bash',
          args: { command: 'echo turnpike-proof | tee proof.txt', description: 'Write proof' },
        },
      });
      const from = recorded.length;
      const run = await runClaude(
        ['Write the proof file', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash'],
        model,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(path.join(run.dir, 'proof.txt'), 'utf8')).toBe('turnpike-proof\n');
      const lines = run.stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map(
          (line) =>
            JSON.parse(line) as { type: string; subtype?: string; is_error?: boolean; result?: string },
        );
      expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init' });
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        is_error: false,
        result: DEFAULT_PROVIDER_BEHAVIOUR.reply,
      });
      const made = expectNoRefusals(from);
      // The second turn carries the tool's output back, as a tool_result Claude Code wrote.
      const results = made
        .flatMap((entry) =>
          (entry.body.messages as { content: unknown }[]).flatMap((message) =>
            Array.isArray(message.content) ? (message.content as { type: string; content?: unknown }[]) : [],
          ),
        )
        .filter((block) => block.type === 'tool_result');
      expect(JSON.stringify(results)).toContain('turnpike-proof');
      const last = providers.requests.at(-1)!;
      expect(JSON.stringify(last.body)).toContain('turnpike-proof');
      rmSync(run.dir, { recursive: true, force: true });
    }, 60_000);
  }

  it('works with its nonessential traffic on: only the HEAD /api/hello warm-up is unanswered', async () => {
    providers.setBehaviour({ toolCall: { name: 'no-such-tool', args: {} } });
    const from = recorded.length;
    const run = await runClaude(['Say hello', '--output-format', 'json'], 'cc-openai', {
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: undefined,
      DISABLE_TELEMETRY: undefined,
      DISABLE_ERROR_REPORTING: undefined,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      is_error: false,
      result: DEFAULT_PROVIDER_BEHAVIOUR.reply,
    });
    expectNoRefusals(from);
    const probes = recorded.slice(from).filter((entry) => entry.method !== 'POST');
    expect(probes.map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual([
      'HEAD /api/hello 404',
    ]);
  }, 60_000);

  it('records what Claude Code sent (headers, paths, fields) for the ADR', () => {
    const betas = new Set(
      recorded.flatMap((entry) =>
        String(entry.headers['anthropic-beta'] ?? '')
          .split(',')
          .filter((flag) => flag !== ''),
      ),
    );
    const paths = new Set(recorded.map((entry) => `${entry.method} ${entry.path}`));
    const fields = new Set(recorded.flatMap((entry) => Object.keys(entry.body)));
    const roles = new Set(
      recorded.flatMap(
        (entry) => (entry.body.messages as { role: string }[] | undefined)?.map((m) => m.role) ?? [],
      ),
    );
    // Printed for the record (docs/adr/0018 lists them); the assertions above are the test.
    process.stdout.write(
      `${JSON.stringify({ betas: [...betas], paths: [...paths], fields: [...fields], roles: [...roles] })}\n`,
    );
    expect(roles.has('user')).toBe(true);
  });
});
