/**
 * End-to-end harness: builds the console when `console/dist` is stale, starts a fresh all-in-one server on a free
 * port with a temporary data directory (embedded PGlite), and drives Debian's Chromium through playwright-core.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const consoleRoot = path.join(repoRoot, 'console');
export const screenshotDir = path.join(repoRoot, 'test-results', 'screenshots');
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const Viewport = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 375, height: 740 },
} as const;

function newestMtime(target: string): number {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) {
    if (
      entry === 'node_modules' ||
      entry === 'dist' ||
      entry.endsWith('.test.ts') ||
      entry.endsWith('.test.tsx')
    )
      continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  }
  return newest;
}

/** Runs the production build unless dist/index.html is newer than every source file. */
export function buildConsoleIfStale(): void {
  const built = path.join(consoleRoot, 'dist', 'index.html');
  const sources = ['src', 'index.html', 'vite.config.ts', 'package.json'].map((p) =>
    path.join(consoleRoot, p),
  );
  const newestSource = Math.max(...sources.filter(existsSync).map(newestMtime));
  if (existsSync(built) && statSync(built).mtimeMs >= newestSource) return;
  // vitest sets NODE_ENV=test, which would make Vite bundle React's development build
  execFileSync('npm', ['run', 'build', '-w', '@turnpike/console'], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  baseUrl: string;
  dataDir: string;
  stop: () => Promise<void>;
}

/**
 * Starts `node server/src/main.ts` on a free port with an empty data directory and waits until it answers; `env`
 * adds to its environment (a fake provider's address).
 */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'turnpike-e2e-'));
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['server/src/main.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // one browser loads many assets; the per-IP web limit is for the public internet
      GLOBAL_WEB_RATE_LIMIT_ENABLE: 'false',
      // the suite makes about 300 /api calls from 127.0.0.1 in two minutes (every page.goto is a full load with
      // /api/status), more than the default 180 per fixed 180 s window; the limiter stays on with a larger budget
      GLOBAL_API_RATE_LIMIT: '100000',
      // every screenshot run signs in once per language, theme and width (over 20 sign-ins, the default budget of
      // the critical limiter per 20 minutes); it stays on with room for that
      CRITICAL_RATE_LIMIT: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      const response = await fetch(`${baseUrl}/api/status`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start within 90 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    baseUrl,
    dataDir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath))
    throw new Error(`Chromium not found at ${chromiumPath} (apt-get install chromium)`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** A browser context at a viewport, with the console's language and theme preset in local storage. */
export async function newContext(
  browser: Browser,
  baseUrl: string,
  {
    viewport = Viewport.desktop,
    language,
    theme,
  }: { viewport?: { width: number; height: number }; language?: 'zh' | 'en'; theme?: 'light' | 'dark' } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport });
  if (language || theme) {
    await context.addInitScript(
      ([site, lng, mode]) => {
        // only the console's pages: other sites (a chat front-end in a frame) may not even offer storage
        if (location.origin !== site) return;
        if (lng && !localStorage.getItem('i18nextLng')) localStorage.setItem('i18nextLng', lng);
        if (mode && !localStorage.getItem('theme-mode')) localStorage.setItem('theme-mode', mode);
      },
      [new URL(baseUrl).origin, language ?? null, theme ?? null] as const,
    );
  }
  return context;
}

/** Saves a screenshot (of the whole page unless told otherwise) as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}
