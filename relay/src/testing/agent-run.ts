/**
 * What the coding-agent tests (codex, gemini-cli, opencode `.int.test.ts`) share: a recording proxy in front of
 * the relay that keeps every request the agent made and the status it got, and a runner that starts the agent's
 * CLI in a scratch directory with a scratch home and only the environment it is given, killed after a deadline.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Where an agent's CLI is looked for, and how a developer installs it. */
export interface AgentCli {
  /** The agent's name in test titles (`Claude Code`). */
  readonly name: string;
  /** The variable that names a binary installed elsewhere (`CLAUDE_CODE_BIN`). */
  readonly env: string;
  /** The binary under the repository's `.tools/` (`claude-code/node_modules/.bin/claude`). */
  readonly tool: string;
  /** The Makefile target that installs it and runs its test (`claude-code-test`). */
  readonly make: string;
}

/**
 * The agent's binary, or why there is none. Without it the test file is skipped on a developer's machine, saying
 * why; under CI (`CI` set) a missing CLI is a failure, so a run cannot be green with an agent never started.
 */
export function findAgentCli(cli: AgentCli): { bin: string | undefined; missing: string } {
  const bin = [process.env[cli.env], path.join(ROOT, '.tools', cli.tool)].find(
    (candidate): candidate is string =>
      typeof candidate === 'string' && candidate !== '' && existsSync(candidate),
  );
  const missing = `${cli.name} is not installed: run \`make ${cli.make}\` (installs it under .tools/) or set ${cli.env}`;
  return { bin, missing };
}

/**
 * `describe` for an agent's tests: skipped with the reason on a developer's machine without the CLI; under CI
 * (`CI` set) a missing CLI is one failing test naming the reason, so a run is never green with an agent not run.
 */
export function describeAgent(
  found: { bin: string | undefined; missing: string },
  title: string,
  body: () => void,
): void {
  if (found.bin !== undefined) {
    describe(title, body);
  } else if (!process.env.CI) {
    describe.skip(`${title} (skipped: ${found.missing})`, body);
  } else {
    describe(title, () => {
      it('has its CLI installed (CI runs every agent)', () => {
        throw new Error(found.missing);
      });
    });
  }
}

/** One request the agent made to the gateway, and the status it got. */
export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Record<string, unknown>;
  status: number;
}

/** A proxy in front of `target` that records what comes through (`calls`) and the status of each answer. */
export async function startRecordingProxy(
  target: URL,
): Promise<{ server: Server; url: string; calls: RecordedCall[]; close(): Promise<void> }> {
  const calls: RecordedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      const entry: RecordedCall = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        status: 0,
      };
      calls.push(entry);
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          entry.status = answer.statusCode ?? 0;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface AgentRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The scratch directory it ran in (the caller removes it). */
  readonly dir: string;
  readonly ms: number;
}

/**
 * Runs `bin args` in a fresh scratch directory with `HOME` a fresh scratch directory too and no environment but
 * PATH, TMPDIR and `env` (which may use `{home}` and `{dir}` in its values); stdin closed; SIGKILL after `timeoutMs`.
 */
export function runAgent(
  bin: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs = 50_000,
  prepare?: (dirs: { dir: string; home: string }) => void,
): Promise<AgentRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnpike-agent-'));
  const home = mkdtempSync(path.join(tmpdir(), 'turnpike-agent-home-'));
  prepare?.({ dir, home });
  const fill = (value: string) => value.replaceAll('{home}', home).replaceAll('{dir}', dir);
  const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: tmpdir() };
  for (const [name, value] of Object.entries(env)) childEnv[name] = fill(value);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args.map(fill), { cwd: dir, env: childEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      resolve({ code, stdout, stderr, dir, ms: Math.round(performance.now() - started) });
    });
  });
}

/**
 * A forward proxy that lets nothing out: every `CONNECT host:port` (HTTPS) and every proxied plain-HTTP request is
 * answered 403 and its host kept in `attempts`. An agent run with HTTPS_PROXY/HTTP_PROXY at it (and NO_PROXY for
 * loopback) shows whether it reaches for any network besides the relay.
 */
export async function startClosedDoor(): Promise<{
  url: string;
  attempts: string[];
  close(): Promise<void>;
}> {
  const attempts: string[] = [];
  const server = createServer((req, res) => {
    attempts.push(req.headers.host ?? req.url ?? '?');
    res.writeHead(403).end();
  });
  server.on('connect', (req, socket) => {
    attempts.push(req.url ?? '?');
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The environment that sends an agent's outside traffic to a closed door, loopback (the relay) excepted. */
export const throughClosedDoor = (doorUrl: string): Record<string, string> => ({
  HTTPS_PROXY: doorUrl,
  HTTP_PROXY: doorUrl,
  https_proxy: doorUrl,
  http_proxy: doorUrl,
  NO_PROXY: '127.0.0.1,localhost',
  no_proxy: '127.0.0.1,localhost',
});
