/**
 * `make lint`'s import check, two rules read from the syntax of every `.ts`/`.tsx` file under a workspace's `src/`:
 *
 * 1. **Layers point one way**: console → api / relay / operator → core, and server (the process of every role,
 *    docs/adr/0037) above api, relay and operator. A workspace imports only the workspaces below it; api, relay and
 *    operator do not import each other. Test code (`*.test.ts`, `testing/` folders) is held to the same rule. The edges still waiting for the move that removes them are listed in {@link PENDING_EDGES},
 *    each with its reason; an edge not listed fails, and so does a listed one that is gone (so the list shrinks).
 * 2. **The relay's floors point down**: http → pipeline → books → formats / providers → contract (STYLE.md). A
 *    file on one floor imports only its own floor or those below; folders of the relay that are no floor (state,
 *    limits, routing, …) are not held to it. Upward edges still waiting for their move are in
 *    {@link PENDING_FLOOR_EDGES}, file by file.
 * 3. **Each workspace declares what it imports**: a package product code imports is in the workspace's
 *    `dependencies`; one only its tests import may be in its `devDependencies` or the root's (vitest, typescript).
 *
 * Rules 1 and 2 read relative specifiers too: `../../relay/src/sse.ts` from core is resolved to the file it names
 * and judged like `@turnpike/relay/sse`.
 *
 * Usage: node scripts/check-imports.ts [root]   (exits 1 and lists the violations; root defaults to this
 * repository, another tree is checked without the pending lists, which name this repository's files)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ownRoot = resolve(import.meta.dirname, '..');
const root = resolve(process.argv[2] ?? ownRoot);
const isOwnTree = root === ownRoot;
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

/** The relay's floors, lowest first: a folder (or file) of `relay/src/` and its floor. */
const RELAY_FLOORS: readonly (readonly [path: string, floor: string])[] = [
  ['contract.ts', 'contract'],
  ['formats/', 'formats/providers'],
  ['providers/', 'formats/providers'],
  ['books/', 'books'],
  ['pipeline/', 'pipeline'],
  ['http/', 'http'],
];
const FLOOR_ORDER = ['contract', 'formats/providers', 'books', 'pipeline', 'http'];

/**
 * Files of the relay that import a floor above their own, each with the move that ends it (`file → floor`). The
 * formats' endpoint tables describe themselves with the pipeline's `EndpointSpec` and read its `Exchange` and
 * `respond`: the words every floor shares belong in the contract floor (STYLE.md `contract.ts`), which does not
 * exist yet. A listed edge that is gone fails, so the list shrinks.
 */
const FORMATS_ON_PIPELINE =
  'endpoint specs, the Exchange and respond() move from pipeline/ to the contract floor';
const PENDING_FLOOR_EDGES: Readonly<Record<string, string>> = {
  'relay/src/formats/anthropic/endpoints.ts → pipeline': FORMATS_ON_PIPELINE,
  'relay/src/formats/gemini/endpoints.ts → pipeline': FORMATS_ON_PIPELINE,
  'relay/src/formats/ingress.ts → pipeline': FORMATS_ON_PIPELINE,
  'relay/src/formats/openai/media-endpoints.ts → pipeline': FORMATS_ON_PIPELINE,
  'relay/src/formats/openai/text-endpoints.ts → pipeline': FORMATS_ON_PIPELINE,
  'relay/src/formats/route.ts → pipeline': FORMATS_ON_PIPELINE,
};

/** The floor of a path relative to the repository root; undefined outside the relay's floors. */
function floorOf(path: string): string | undefined {
  const inRelay = path
    .split(sep)
    .join('/')
    .match(/^relay\/src\/(.*)$/)?.[1];
  if (inRelay === undefined) return undefined;
  return RELAY_FLOORS.find(([prefix]) =>
    prefix.endsWith('/') ? inRelay.startsWith(prefix) : inRelay === prefix,
  )?.[1];
}

/** The workspace a path relative to the repository root lies in. */
function workspaceOf(path: string): Workspace | undefined {
  const first = path.split(sep)[0];
  return (WORKSPACES as readonly string[]).includes(first ?? '') ? (first as Workspace) : undefined;
}

/** The workspace and path (relative to the root) a specifier names: a `@turnpike/…` package or a relative path. */
function targetOf(file: string, specifier: string): { workspace: Workspace; path?: string } | undefined {
  if (specifier.startsWith('.')) {
    const path = relative(root, resolve(dirname(file), specifier));
    const workspace = workspaceOf(path);
    return workspace ? { workspace, path } : undefined;
  }
  const name = packageOf(specifier);
  if (!name?.startsWith('@turnpike/')) return undefined;
  const workspace = name.slice('@turnpike/'.length) as Workspace;
  // `@turnpike/relay/pipeline/exchange` names relay/src/pipeline/exchange(.ts): enough to know its floor.
  const rest = specifier.slice(name.length + 1);
  return { workspace, ...(rest ? { path: join(workspace, 'src', rest) } : {}) };
}

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
const floorEdgesSeen = new Set<string>();

for (const workspace of WORKSPACES) {
  const manifest = readJson(join(root, workspace, 'package.json'));
  const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
  const devDependencies = new Set(Object.keys(manifest.devDependencies ?? {}));
  const undeclared = new Map<string, string>();
  for (const file of sourceFiles(join(root, workspace, 'src'))) {
    const test = isTestFile(file);
    const from = relative(root, file);
    const fromFloor = floorOf(from);
    for (const specifier of specifiersOf(file)) {
      const found = targetOf(file, specifier);
      const target = found?.workspace;
      if (target && target !== workspace && !ALLOWED[workspace].includes(target)) {
        const edge = `${workspace}${test ? ' (tests)' : ''} → ${target}`;
        edgesSeen.add(edge);
        if (!PENDING_EDGES[edge] || !isOwnTree) problems.push(`${from}: imports ${specifier} (${edge})`);
      }
      const toFloor = found?.path === undefined ? undefined : floorOf(found.path);
      if (
        fromFloor &&
        toFloor &&
        target === workspace &&
        FLOOR_ORDER.indexOf(toFloor) > FLOOR_ORDER.indexOf(fromFloor)
      ) {
        const edge = `${from} → ${toFloor}`;
        floorEdgesSeen.add(edge);
        if (!PENDING_FLOOR_EDGES[edge] || !isOwnTree)
          problems.push(`${from}: imports ${specifier} (relay floor ${fromFloor} → ${toFloor}, upwards)`);
      }
      const name = packageOf(specifier);
      if (!name) continue;
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

if (isOwnTree) {
  for (const edge of Object.keys(PENDING_EDGES))
    if (!edgesSeen.has(edge))
      problems.push(`scripts/check-imports.ts: the pending edge "${edge}" is gone; remove it`);
  for (const edge of Object.keys(PENDING_FLOOR_EDGES))
    if (!floorEdgesSeen.has(edge))
      problems.push(`scripts/check-imports.ts: the pending floor edge "${edge}" is gone; remove it`);
}

if (problems.length > 0) {
  console.error(`import check: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(
  "import check: layers point one way, the relay's floors point down; every workspace declares what it imports",
);
