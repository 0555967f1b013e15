/**
 * Runs every Vitest project and ends with one plain summary line (`tests: N passed, N failed, N skipped`) that
 * CI reads, whatever reporter output came before it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

const report = 'test-results/vitest.json';
mkdirSync('test-results', { recursive: true });
const run = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit' },
);

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  success: boolean;
}

let summary: JsonReport | undefined;
try {
  summary = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
} catch {
  summary = undefined;
}
if (!summary) {
  console.log('tests: 0 passed, 1 failed');
  process.exit(run.status || 1);
}
const skipped = summary.numPendingTests + summary.numTodoTests;
console.log(`tests: ${summary.numPassedTests} passed, ${summary.numFailedTests} failed, ${skipped} skipped`);
process.exit(run.status ?? 1);
