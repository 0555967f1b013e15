/**
 * Prints the size of the production build and fails when the initial JavaScript (the entry script and the
 * chunks index.html preloads) is over the budget of 250 KB gzipped.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 250;
const dist = path.resolve(import.meta.dirname, '..', 'dist');
const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
const initial = new Set<string>();
for (const match of html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g))
  if (match[1]) initial.add(match[1]);

const gz = (file: string) => gzipSync(readFileSync(path.join(dist, file))).length;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
let totalRaw = 0;
let totalGz = 0;
for (const name of readdirSync(path.join(dist, 'assets'))) {
  const file = `assets/${name}`;
  totalRaw += statSync(path.join(dist, file)).size;
  totalGz += gz(file);
}
const initialGz = [...initial].reduce((sum, file) => sum + gz(file), 0);
process.stdout.write(
  `console build: ${kb(totalRaw)} raw, ${kb(totalGz)} gzipped in all; initial JS ${kb(initialGz)} gzipped (${initial.size} files, budget ${BUDGET_KB} KB)\n`,
);
if (initialGz > BUDGET_KB * 1024) {
  process.stderr.write(`initial JS is over the ${BUDGET_KB} KB budget\n`);
  process.exitCode = 1;
}
