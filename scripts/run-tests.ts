/**
 * Runs every Vitest project and ends with one plain summary line (`tests: N passed, N failed, N skipped`) that
 * CI reads, whatever reporter output came before it.
 *
 * With `TEST_POSTGRES_URL` or `TEST_REDIS_URL` set (CI), the money, outage and billing files of
 * scripts/both-backends.ts run a second time, at the same time, on the embedded default (PGlite, no Redis), so both
 * back ends are proven on every run. Their output is kept apart and printed when they end; the summary counts both.
 * Arguments (a file filter, `--project …`) go to the whole run; with arguments, the embedded run is left out.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { BOTH_BACKENDS } from './both-backends.ts';

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTestSuites: number;
  numFailedTestSuites: number;
}

interface Run {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Where its reporter's output goes; absent: this terminal. */
  readonly log?: string;
}

mkdirSync('test-results', { recursive: true });
const extra = process.argv.slice(2);
const hasRealBackends = Boolean(process.env.TEST_POSTGRES_URL || process.env.TEST_REDIS_URL);

const missing = BOTH_BACKENDS.filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.log(`scripts/both-backends.ts names files that do not exist: ${missing.join(', ')}`);
  console.log('tests: 0 passed, 1 failed');
  process.exit(1);
}

const runs: Run[] = [
  { name: hasRealBackends ? 'postgres+redis' : 'embedded', args: extra, env: process.env },
];
if (hasRealBackends && extra.length === 0) {
  const { TEST_POSTGRES_URL: _postgres, TEST_REDIS_URL: _redis, ...embedded } = process.env;
  runs.push({
    name: 'embedded',
    // One worker: it shares the machine with the whole run beside it.
    args: ['--project', '*:integration', '--maxWorkers=1', ...BOTH_BACKENDS],
    env: embedded,
    log: 'test-results/vitest-embedded.log',
  });
}

function start(run: Run): Promise<{ run: Run; code: number; report: JsonReport | undefined }> {
  const report = `test-results/vitest-${run.name.replace(/\W/g, '-')}.json`;
  const child = spawn(
    'npx',
    ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...run.args],
    { stdio: run.log ? ['ignore', 'pipe', 'pipe'] : 'inherit', env: run.env },
  );
  if (run.log) {
    const out = createWriteStream(run.log);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  return new Promise((resolve) => {
    child.on('close', (code) => {
      let parsed: JsonReport | undefined;
      try {
        parsed = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
      } catch {
        parsed = undefined;
      }
      resolve({ run, code: code ?? 1, report: parsed });
    });
  });
}

const results = await Promise.all(runs.map(start));
let passed = 0;
let failed = 0;
let skipped = 0;
let ok = true;
for (const { run, code, report } of results) {
  if (run.log) {
    console.log(`\n===== the ${run.name} back end (${run.log}) =====`);
    console.log(readFileSync(run.log, 'utf8'));
  }
  if (!report) {
    console.log(`${run.name}: vitest wrote no report (exit ${code})`);
    failed += 1;
    ok = false;
    continue;
  }
  const runSkipped = report.numPendingTests + report.numTodoTests;
  console.log(
    `${run.name}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${runSkipped} skipped (exit ${code})`,
  );
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += runSkipped;
  // A file that failed to load fails no test but fails the run.
  if (code !== 0) ok = false;
}
if (!ok && failed === 0) failed = 1;
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok ? 0 : 1);
