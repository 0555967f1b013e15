/**
 * Writes the CRD YAML of every resource declared in operator/src/api/v1alpha1.ts into crds/ (what `kubectl apply`
 * and the stand-in API server read) and into the turnpike-crds chart (Helm reads nothing outside a chart's
 * folder). `npm run gen:crds` writes them; `--check` lists the files that differ from the declaration, as
 * generate.test.ts does.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RESOURCES } from '../api/v1alpha1.ts';
import { crdFileName, renderCrd } from './render.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The folders that hold the generated CRDs, relative to the repository. */
export const CRD_FOLDERS = ['crds', 'charts/turnpike-crds/files/crds'] as const;

/** Every generated file (path relative to the repository) and its text. */
export function generatedCrds(): Map<string, string> {
  const files = new Map<string, string>();
  for (const resource of RESOURCES) {
    const text = renderCrd(resource);
    for (const folder of CRD_FOLDERS) files.set(path.join(folder, crdFileName(resource)), text);
  }
  return files;
}

const yamlFiles = (folder: string, root = ROOT) =>
  existsSync(path.join(root, folder))
    ? readdirSync(path.join(root, folder))
        .filter((name) => name.endsWith('.yaml'))
        .map((name) => path.join(folder, name))
    : [];

/**
 * Files (relative to `root`, the repository by default) missing, differing from the declaration, or left over from
 * a resource no longer declared.
 */
export function staleCrds(root = ROOT): string[] {
  const files = generatedCrds();
  const stale = [...files]
    .filter(
      ([file, text]) =>
        !existsSync(path.join(root, file)) || readFileSync(path.join(root, file), 'utf8') !== text,
    )
    .map(([file]) => file);
  for (const folder of CRD_FOLDERS)
    for (const file of yamlFiles(folder, root)) if (!files.has(file)) stale.push(file);
  return stale.sort();
}

function writeCrds(): void {
  const files = generatedCrds();
  for (const folder of CRD_FOLDERS) {
    mkdirSync(path.join(ROOT, folder), { recursive: true });
    for (const file of yamlFiles(folder)) if (!files.has(file)) rmSync(path.join(ROOT, file));
  }
  for (const [file, text] of files) writeFileSync(path.join(ROOT, file), text);
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const stale = staleCrds();
    for (const file of stale) process.stderr.write(`stale CRD: ${file} (run npm run gen:crds)\n`);
    process.exitCode = stale.length > 0 ? 1 : 0;
  } else writeCrds();
}
