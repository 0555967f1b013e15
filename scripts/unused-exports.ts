/**
 * `make lint`'s unused-export check: fails when a workspace exports something that no product code imports.
 * An export only its own tests import is dead code with a test attached (the audio formula sat like that while
 * audio tokens were billed as text, issue 30), so tests do not count as users; neither do the test helpers in
 * `testing/` folders and `e2e/`, whose own exports are not checked either.
 *
 * Product code is every `.ts`/`.tsx` file under a workspace's `src/` that is not a test, plus the tools that run it
 * (`bench/`, `scripts/`, `charts/*.ts`). Imports are read from the syntax (static, `export … from`, `import()`),
 * resolved relatively or through the `@turnpike/<workspace>/<path>` package exports. A namespace import or
 * `export *` uses every export of its target. An export its own module uses is live (exported for a test as
 * well); only values are checked, since a type costs nothing at run time and is often exported as documentation.
 *
 * Usage: node scripts/unused-exports.ts   (exits 1 and lists `file: name` lines when something is unused)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');

/**
 * Exports waiting on work in flight elsewhere, each with the issue that wires or deletes it. Keep this list short
 * (empty today).
 */
const PENDING: Readonly<Record<string, string>> = {};

/**
 * Test seams: hooks a test uses to replace or read the state of a product module, kept beside that state because
 * moving the state out would only add an indirection. A seam that product code starts using leaves this list.
 */
const TEST_SEAMS: Readonly<Record<string, string>> = {
  'relay/src/metrics/prometheus-text.ts: readSample': 'reads one sample of a /metrics scrape',
  'relay/src/metrics/tracing.ts: disableRelayTracing': 'tracing is process-wide; a test turns it back off',
  'relay/src/tasks/register.ts: taskPollerOf':
    'tests run poller passes by hand instead of waiting on its timer',
  'console/src/features/auth/third-party.ts: setLeaveFor': 'replaces leaving the page (window.location)',
  'console/src/lib/api.ts: setLoginRedirect': 'replaces the redirect to the login page',
  'console/src/lib/toast.ts: getToasts': 'reads the toast queue',
  'operator/src/crd/validate.ts: createCrdValidators': "the stand-in API server's schema validation",
  'operator/src/kube/client.ts: kubeConfigFor': 'points a kube client at the stand-in API server',
};

const isTest = (path: string) =>
  /\.(test|int\.test|e2e\.test)\.tsx?$/.test(path) || /(^|\/)(testing|e2e)\//.test(path);

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, path));
  }
  return out;
}

const workspaces: string[] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces;
const checked = workspaces.flatMap((w) => walk(join(root, w, 'src'))).filter((p) => !isTest(p));
const tools = [...walk(join(root, 'bench')), ...walk(join(root, 'scripts'))]
  .concat(walk(join(root, 'charts')).filter((p) => !p.includes('/', 'charts/'.length)))
  .filter((p) => !isTest(p));
const importers = [...checked, ...tools];

/** `@turnpike/<workspace>` → its folder, from each workspace's package name. */
const packageDirs = new Map<string, string>(
  workspaces.map((w) => [JSON.parse(readFileSync(join(root, w, 'package.json'), 'utf8')).name as string, w]),
);

function withExtension(base: string): string | undefined {
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    if (existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile()) return candidate;
  }
  return undefined;
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.'))
    return withExtension(relative(root, resolve(root, dirname(from), specifier)));
  const match = /^(@[^/]+\/[^/]+)(?:\/(.*))?$/.exec(specifier);
  const dir = match ? packageDirs.get(match[1]!) : undefined;
  if (!match || dir === undefined) return undefined;
  if (match[2] === undefined) {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const main = typeof pkg.exports?.['.'] === 'string' ? pkg.exports['.'] : './src/index.ts';
    return withExtension(join(dir, main));
  }
  return withExtension(join(dir, 'src', match[2]));
}

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** The names a file exports itself (re-exports count as uses of their source, not as exports). */
function exportsOf(file: ts.SourceFile): string[] {
  const names: string[] = [];
  for (const statement of file.statements) {
    if (ts.isExportAssignment(statement)) names.push('default');
    if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause) {
      if (ts.isNamedExports(statement.exportClause) && !statement.isTypeOnly) {
        for (const element of statement.exportClause.elements) {
          if (!element.isTypeOnly) names.push(element.name.text);
        }
      }
    }
    if (!hasModifier(statement, ts.SyntaxKind.ExportKeyword)) continue;
    if (hasModifier(statement, ts.SyntaxKind.DefaultKeyword)) names.push('default');
    else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

/** target file → names used (`*` for all). */
const used = new Map<string, Set<string>>();
const use = (target: string | undefined, name: string) => {
  if (target === undefined) return;
  const names = used.get(target) ?? new Set<string>();
  used.set(target, names);
  names.add(name);
};

function recordImports(path: string, file: ts.SourceFile) {
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const target = resolveSpecifier(path, (node.moduleSpecifier as ts.StringLiteral).text);
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        if (!clause)
          use(target, '*'); // a side-effect import
        else {
          if (clause.name) use(target, 'default');
          const bindings = clause.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) use(target, '*');
          if (bindings && ts.isNamedImports(bindings)) {
            for (const element of bindings.elements) use(target, (element.propertyName ?? element.name).text);
          }
        }
      } else if (!node.exportClause || ts.isNamespaceExport(node.exportClause)) use(target, '*');
      else
        for (const element of node.exportClause.elements)
          use(target, (element.propertyName ?? element.name).text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      use(resolveSpecifier(path, node.arguments[0].text), '*');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}

const parse = (path: string) =>
  ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.Latest, true);

for (const path of importers) recordImports(path, parse(path));

/** How often each identifier occurs in a file (a declaration's own name counts once). */
function identifierCounts(file: ts.SourceFile): Map<string, number> {
  const counts = new Map<string, number>();
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node)) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return counts;
}

const unused: string[] = [];
for (const path of checked) {
  const names = used.get(path);
  if (names?.has('*')) continue;
  const file = parse(path);
  const counts = identifierCounts(file);
  for (const name of exportsOf(file)) {
    if (names?.has(name)) continue;
    // Used by its own module (exported for a test as well): not dead. `default` has no name to look for.
    if (name !== 'default' && (counts.get(name) ?? 0) > 1) continue;
    const key = `${path}: ${name}`;
    if (key in PENDING || key in TEST_SEAMS) continue;
    unused.push(key);
  }
}
const stalePending = [...Object.keys(PENDING), ...Object.keys(TEST_SEAMS)].filter((key) => {
  const [path, name] = key.split(': ') as [string, string];
  return !existsSync(join(root, path)) || used.get(path)?.has(name) || used.get(path)?.has('*');
});

if (unused.length > 0 || stalePending.length > 0) {
  if (unused.length > 0) {
    process.stderr.write(`Exports no product code imports (tests do not count): ${unused.length}\n`);
    for (const line of unused) process.stderr.write(`  ${line}\n`);
    process.stderr.write('Wire each into the product, delete it, or drop its `export`.\n');
  }
  if (stalePending.length > 0) {
    process.stderr.write(
      'Listed entries now used by product code or gone (remove them from PENDING / TEST_SEAMS):\n',
    );
    for (const line of stalePending) process.stderr.write(`  ${line}\n`);
  }
  process.exit(1);
}
process.stdout.write(`unused exports: none in ${checked.length} files\n`);
