/**
 * Copies the files the charts package from where they are edited: Grafana dashboards (deploy/grafana/*.json) and
 * alert rules (deploy/prometheus/*.yaml) into charts/turnpike/files/. Helm reads nothing outside a chart's folder,
 * and copies (not symlinks) survive `helm package` and Argo CD alike. `make chart-sync` runs it; `--check` lists
 * copies that differ (chart tests). The CRDs are generated into both places by `npm run gen:crds` instead.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

interface CopySet {
  readonly from: string;
  readonly to: string;
  readonly suffix: string;
}

export const COPY_SETS: readonly CopySet[] = [
  { from: 'deploy/grafana', to: 'charts/turnpike/files/grafana', suffix: '.json' },
  { from: 'deploy/prometheus', to: 'charts/turnpike/files/prometheus', suffix: '.yaml' },
];

const listed = (folder: string, suffix: string) =>
  existsSync(join(ROOT, folder))
    ? readdirSync(join(ROOT, folder))
        .filter((name) => name.endsWith(suffix))
        .sort()
    : [];

/** Paths (relative to the repository) whose copy is missing, stale or left over. */
export function staleCopies(): string[] {
  const stale: string[] = [];
  for (const set of COPY_SETS) {
    const sources = listed(set.from, set.suffix);
    for (const name of sources) {
      const copy = join(ROOT, set.to, name);
      if (!existsSync(copy) || !readFileSync(copy).equals(readFileSync(join(ROOT, set.from, name))))
        stale.push(join(set.to, name));
    }
    for (const name of listed(set.to, set.suffix))
      if (!sources.includes(name)) stale.push(join(set.to, name));
  }
  return stale;
}

/** Makes every copy match its source. */
export function syncCopies(): void {
  for (const set of COPY_SETS) {
    const sources = listed(set.from, set.suffix);
    mkdirSync(join(ROOT, set.to), { recursive: true });
    for (const name of listed(set.to, set.suffix))
      if (!sources.includes(name)) rmSync(join(ROOT, set.to, name));
    for (const name of sources) copyFileSync(join(ROOT, set.from, name), join(ROOT, set.to, name));
  }
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const stale = staleCopies();
    for (const path of stale) process.stderr.write(`stale copy: ${path} (run make chart-sync)\n`);
    process.exitCode = stale.length > 0 ? 1 : 0;
  } else {
    syncCopies();
  }
}
