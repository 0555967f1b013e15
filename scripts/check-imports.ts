/**
 * `make lint`'s import check, four rules read from the syntax of every `.ts`/`.tsx` file under a workspace's `src/`
 * (the graph itself is import-graph.ts's):
 *
 * 1. **Layers point one way**: console → api / relay / operator → core, and server (the process of every role,
 *    docs/adr/0037) above api, relay and operator. A workspace imports only the workspaces below it; api, relay and
 *    operator do not import each other. Test code (`*.test.ts`, `testing/` folders) is held to the same rule. The
 *    edges still waiting for the move that removes them are listed in {@link PENDING_EDGES}, each with its reason;
 *    an edge not listed fails, and so does a listed one that is gone (so the list shrinks).
 * 2. **Floors point down** inside a workspace ({@link FLOORS}): the relay's http → pipeline → books → formats /
 *    providers → contract (STYLE.md, docs/adr/0047), core's runtime → repos → db → domain, the console's routes →
 *    features → components → lib. A file on one floor imports only its own floor or those below, tests included;
 *    folders on no floor (the relay's state, limits, routing, …) are held only to rule 3. Upward edges waiting for
 *    their move are in {@link PENDING_FLOOR_EDGES}, file by file.
 * 3. **No circles**: files that import each other in a circle fail, unless only types cross it and it holds at most
 *    {@link TYPE_ONLY_CIRCLE_LIMIT} files; circles waiting to be broken are in {@link PENDING_CIRCLES}, with the
 *    most files each may hold.
 * 4. **Each workspace declares what it imports**: a package product code imports is in the workspace's
 *    `dependencies`; one only its tests import may be in its `devDependencies` or the root's (vitest, typescript).
 *
 * Rules 1 to 3 read relative specifiers too: `../../relay/src/sse.ts` from core is resolved to the file it names
 * and judged like `@turnpike/relay/sse`.
 *
 * Usage: node scripts/check-imports.ts [root] [--figures]   (exits 1 and lists the violations; root defaults to
 * this repository, another tree is checked without the pending lists, which name this repository's files;
 * `--figures` prints each workspace's files in circles, upward imports and longest function per floor)
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import {
  circlesOf,
  type Floors,
  figuresOf,
  floorOf,
  floorOrder,
  isTestFile,
  readWorkspace,
} from './import-graph.ts';

const ownRoot = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const showFigures = args.includes('--figures');
const root = resolve(args.find((arg) => !arg.startsWith('--')) ?? ownRoot);
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

/**
 * Each workspace's floors, lowest first: a folder (or file) of `<workspace>/src/` and its floor. A file on one
 * floor imports only its own floor or those below; folders that are on no floor (the relay's state, limits,
 * routing, …) are not held to it, only to the circle rule.
 */
const FLOORS: Readonly<Partial<Record<Workspace, Floors>>> = {
  // STYLE.md: http → pipeline → books → formats / providers → contract (docs/adr/0047)
  relay: [
    ['contract.ts', 'contract'],
    ['formats/', 'formats/providers'],
    ['providers/', 'formats/providers'],
    ['books/', 'books'],
    ['pipeline/', 'pipeline'],
    ['http/', 'http'],
    ['app.ts', 'http'],
  ],
  // the words (domain, errors, crypto) under the tables, the tables under the repositories, all under the runtime
  core: [
    ['errors.ts', 'domain'],
    ['json.ts', 'domain'],
    ['crypto/', 'domain'],
    ['domain/', 'domain'],
    ['db/', 'db'],
    ['repos/', 'repos'],
    ['runtime/', 'runtime'],
  ],
  // shared helpers under the UI kit, the kit under the features, the features under the thin file routes
  console: [
    ['lib/', 'lib'],
    ['components/', 'components'],
    ['features/', 'features'],
    ['routes/', 'routes'],
    ['main.tsx', 'routes'],
  ],
};

/**
 * Upward edges still waiting for their move, file by file (`file → floor`), each with the move that ends it. A
 * listed edge that is gone fails, so the list shrinks.
 */
const PENDING_FLOOR_EDGES: Readonly<Record<string, string>> = {
  'core/src/db/pglite-worker.ts → runtime':
    "the embedded database's worker releases memory with the runtime's collector; it belongs below both",
};

/**
 * A circle of type-only imports of at most this many files is tolerated (two types that name each other); any
 * other circle fails unless it is listed in {@link PENDING_CIRCLES}.
 */
const TYPE_ONLY_CIRCLE_LIMIT = 4;

/**
 * Circles still waiting to be broken: one file of the circle and the most files it may hold, with the work that
 * breaks it. A listed circle that grows, shrinks (lower the number) or is gone fails, so the list only shrinks.
 */
const PENDING_CIRCLES: Readonly<Record<string, readonly [files: number, reason: string]>> = {};

/** The workspace a path relative to the repository root lies in. */
function workspaceOf(path: string): Workspace | undefined {
  const first = path.split(sep)[0];
  return (WORKSPACES as readonly string[]).includes(first ?? '') ? (first as Workspace) : undefined;
}

/** The workspace a specifier names: a `@turnpike/…` package or a relative path. */
function targetOf(file: string, specifier: string): { workspace: Workspace } | undefined {
  if (specifier.startsWith('.')) {
    const workspace = workspaceOf(relative(root, resolve(dirname(file), specifier)));
    return workspace ? { workspace } : undefined;
  }
  const name = packageOf(specifier);
  if (!name?.startsWith('@turnpike/')) return undefined;
  return { workspace: name.slice('@turnpike/'.length) as Workspace };
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
const circlesSeen = new Set<string>();
const figures: string[] = [];

for (const workspace of WORKSPACES) {
  const manifest = readJson(join(root, workspace, 'package.json'));
  const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
  const devDependencies = new Set(Object.keys(manifest.devDependencies ?? {}));
  const undeclared = new Map<string, string>();
  const floors = FLOORS[workspace] ?? [];
  const order = floorOrder(floors);
  const files = readWorkspace(root, workspace);
  for (const file of files) {
    const test = isTestFile(file.path);
    const from = file.path;
    const fromFloor = floorOf(floors, workspace, from);
    for (const { specifier, target: path } of file.imports) {
      const found = targetOf(join(root, from), specifier);
      const target = found?.workspace;
      if (target && target !== workspace && !ALLOWED[workspace].includes(target)) {
        const edge = `${workspace}${test ? ' (tests)' : ''} → ${target}`;
        edgesSeen.add(edge);
        if (!PENDING_EDGES[edge] || !isOwnTree) problems.push(`${from}: imports ${specifier} (${edge})`);
      }
      const toFloor = path === undefined ? undefined : floorOf(floors, workspace, path);
      if (fromFloor && toFloor && order.indexOf(toFloor) > order.indexOf(fromFloor)) {
        const edge = `${from} → ${toFloor}`;
        floorEdgesSeen.add(edge);
        if (!PENDING_FLOOR_EDGES[edge] || !isOwnTree)
          problems.push(
            `${from}: imports ${specifier} (${workspace} floor ${fromFloor} → ${toFloor}, upwards)`,
          );
      }
      const name = packageOf(specifier);
      if (!name) continue;
      const declared =
        target === workspace ||
        dependencies.has(name) ||
        (test && (devDependencies.has(name) || rootDev.has(name)));
      if (!declared && !undeclared.has(name)) undeclared.set(name, from);
    }
  }
  for (const [name, file] of undeclared)
    problems.push(`${workspace}/package.json: does not declare ${name} (imported by ${file})`);
  for (const circle of circlesOf(files)) {
    if (circle.typeOnly && circle.files.length <= TYPE_ONLY_CIRCLE_LIMIT) continue;
    const key = circle.files.find((file) => PENDING_CIRCLES[file]);
    const allowed = key && isOwnTree ? PENDING_CIRCLES[key]?.[0] : undefined;
    if (key && allowed !== undefined) circlesSeen.add(key);
    if (allowed === undefined || circle.files.length > allowed)
      problems.push(
        `${circle.files[0]}: in a circle of ${circle.files.length} files${circle.typeOnly ? ' (type-only)' : ''}: ${circle.files.join(', ')}`,
      );
    else if (circle.files.length < allowed)
      problems.push(
        `scripts/check-imports.ts: the circle through ${key} holds ${circle.files.length} files now; lower its pending size`,
      );
  }
  if (showFigures) figures.push(...figuresOf(files, workspace, floors));
}

if (isOwnTree) {
  for (const edge of Object.keys(PENDING_EDGES))
    if (!edgesSeen.has(edge))
      problems.push(`scripts/check-imports.ts: the pending edge "${edge}" is gone; remove it`);
  for (const edge of Object.keys(PENDING_FLOOR_EDGES))
    if (!floorEdgesSeen.has(edge))
      problems.push(`scripts/check-imports.ts: the pending floor edge "${edge}" is gone; remove it`);
  for (const key of Object.keys(PENDING_CIRCLES))
    if (!circlesSeen.has(key))
      problems.push(`scripts/check-imports.ts: the pending circle through "${key}" is gone; remove it`);
}

if (showFigures) console.log(figures.join('\n'));
if (problems.length > 0) {
  console.error(`import check: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(
  'import check: layers point one way, floors point down, no circles beyond a few type-only files; every workspace declares what it imports',
);
