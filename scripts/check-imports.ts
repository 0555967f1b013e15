/**
 * `make lint`'s import check, two rules read from the syntax of every `.ts`/`.tsx` file under a workspace's `src/`:
 *
 * 1. **Layers point one way**: console → api / relay / operator → core, and server (the process of every role,
 *    docs/adr/0037) above api, relay and operator. A workspace imports only the workspaces below it; api, relay and
 *    operator do not import each other. Test code (`*.test.ts`, `testing/` folders) is held to the same rule. The edges still waiting for the move that removes them are listed in {@link PENDING_EDGES},
 *    each with its reason; an edge not listed fails, and so does a listed one that is gone (so the list shrinks).
 * 2. **Each workspace declares what it imports**: a package product code imports is in the workspace's
 *    `dependencies`; one only its tests import may be in its `devDependencies` or the root's (vitest, typescript).
 *
 * Usage: node scripts/check-imports.ts   (exits 1 and lists the violations)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const WORKSPACES = ['core', 'api', 'relay', 'operator', 'console', 'server'] as const;
type Workspace = (typeof WORKSPACES)[number];

/** The workspaces each one may import. */
const ALLOWED: Readonly<Record<Workspace, readonly Workspace[]>> = {
  core: [],
  api: ['core'],
  relay: ['core'],
  operator: ['core'],
  console: ['core'],
  server: ['core', 'api', 'relay', 'operator'],
};

/**
 * Edges against the layers that are still there, each with the work that removes it. Keep this list short (issue
 * 30 emptied it: the server entry composes the roles, core's runtime serves every role's tests).
 */
const PENDING_EDGES: Readonly<Record<string, string>> = {};

const isTestFile = (file: string) => /\.test\.tsx?$/.test(file) || /\/testing\//.test(file);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.gen.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative and `node:`. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:'))
    return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const readJson = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, string>>;
const rootDev = new Set(Object.keys(readJson(join(root, 'package.json')).devDependencies ?? {}));

const problems: string[] = [];
const edgesSeen = new Set<string>();

for (const workspace of WORKSPACES) {
  const manifest = readJson(join(root, workspace, 'package.json'));
  const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
  const devDependencies = new Set(Object.keys(manifest.devDependencies ?? {}));
  const undeclared = new Map<string, string>();
  for (const file of sourceFiles(join(root, workspace, 'src'))) {
    const test = isTestFile(file);
    for (const specifier of specifiersOf(file)) {
      const name = packageOf(specifier);
      if (!name) continue;
      const target = name.startsWith('@turnpike/')
        ? (name.slice('@turnpike/'.length) as Workspace)
        : undefined;
      if (target && target !== workspace && !ALLOWED[workspace].includes(target)) {
        const edge = `${workspace}${test ? ' (tests)' : ''} → ${target}`;
        edgesSeen.add(edge);
        if (!PENDING_EDGES[edge]) problems.push(`${relative(root, file)}: imports ${specifier} (${edge})`);
      }
      const declared =
        target === workspace ||
        dependencies.has(name) ||
        (test && (devDependencies.has(name) || rootDev.has(name)));
      if (!declared && !undeclared.has(name)) undeclared.set(name, relative(root, file));
    }
  }
  for (const [name, file] of undeclared)
    problems.push(`${workspace}/package.json: does not declare ${name} (imported by ${file})`);
}

for (const edge of Object.keys(PENDING_EDGES))
  if (!edgesSeen.has(edge))
    problems.push(`scripts/check-imports.ts: the pending edge "${edge}" is gone; remove it`);

if (problems.length > 0) {
  console.error(`import check: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('import check: layers point one way; every workspace declares what it imports');
