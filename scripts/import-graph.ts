/**
 * The import graph of one workspace, read from the syntax of its `.ts`/`.tsx` files: which file imports which
 * (relative specifiers and the workspace's own `@turnpike/<ws>/…` paths), whether only types cross the edge, the
 * circles (strongly connected components), and the longest function of each file. `check-imports.ts` judges
 * these; `node scripts/import-graph.ts [root]` prints the figures the relay's floors are measured by
 * (docs/adr/0047): files in circles, upward imports, the largest function per floor.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import or re-export of a file: what it names, the file it resolves to (when it is ours), type-only or not. */
export interface ImportEdge {
  readonly specifier: string;
  /** The imported file relative to the root, with `/` separators; undefined for packages. */
  readonly target?: string;
  readonly typeOnly: boolean;
}

/** One source file: its path relative to the root and its imports. */
export interface SourceFile {
  readonly path: string;
  readonly imports: readonly ImportEdge[];
  /** The longest function (declaration, arrow, method) in lines, and its name. */
  readonly longest: { readonly name: string; readonly lines: number };
}

const toSlash = (path: string) => path.split(sep).join('/');

/** Every `.ts`/`.tsx` file under `dir`, generated and declaration files left out. */
export function sourceFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === 'node_modules' || name === 'dist' ? [] : sourceFilesUnder(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.gen.ts') ? [path] : [];
  });
}

/** The file a relative path names, tried as written and with the extensions TypeScript would try. */
function resolveFile(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')];
  const js = base.replace(/\.js$/, '.ts');
  if (js !== base) candidates.push(js, js.replace(/\.ts$/, '.tsx'));
  const found = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  return toSlash(relative(root, found ?? base));
}

/** The file of the same workspace a `@turnpike/<ws>/sub/path` specifier names. */
function resolveOwnPackage(root: string, workspace: string, specifier: string): string | undefined {
  const prefix = `@turnpike/${workspace}/`;
  if (!specifier.startsWith(prefix)) return undefined;
  return resolveFile(root, join(root, workspace, 'src', 'x.ts'), `./${specifier.slice(prefix.length)}`);
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return (
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return (
    clause !== undefined &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
  );
}

function functionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

/** Reads one file: its imports resolved against the root, and its longest function. */
export function readSourceFile(root: string, workspace: string, file: string): SourceFile {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imports: ImportEdge[] = [];
  let longest = { name: '', lines: 0 };
  const add = (specifier: string, typeOnly: boolean) => {
    const target = specifier.startsWith('.')
      ? resolveFile(root, file, specifier)
      : resolveOwnPackage(root, workspace, specifier);
    imports.push({ specifier, typeOnly, ...(target ? { target } : {}) });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      add(node.moduleSpecifier.text, isTypeOnlyImport(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      add(node.moduleSpecifier.text, isTypeOnlyExport(node));
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      add(node.arguments[0].text, false);
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isMethodDeclaration(node)
    ) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (end - start + 1 > longest.lines) longest = { name: functionName(node), lines: end - start + 1 };
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { path: toSlash(relative(root, file)), imports, longest };
}

/** Every source file of a workspace's `src/`, read. */
export function readWorkspace(root: string, workspace: string): SourceFile[] {
  return sourceFilesUnder(join(root, workspace, 'src')).map((file) => readSourceFile(root, workspace, file));
}

/**
 * The circles of the graph (Tarjan's strongly connected components of more than one file), each sorted, with
 * whether it closes on type-only edges alone (no circle is left once those are dropped).
 */
export function circlesOf(files: readonly SourceFile[]): { files: string[]; typeOnly: boolean }[] {
  const known = new Set(files.map((file) => file.path));
  const edges = (valueOnly: boolean) =>
    new Map(
      files.map((file) => [
        file.path,
        file.imports
          .filter((edge) => edge.target && known.has(edge.target) && !(valueOnly && edge.typeOnly))
          .map((edge) => edge.target as string),
      ]),
    );
  const all = components(edges(false));
  const valueCircles = components(edges(true));
  const inValueCircle = new Set(valueCircles.flat());
  return all.map((circle) => ({
    files: circle.sort(),
    typeOnly: !circle.some((file) => inValueCircle.has(file)),
  }));
}

/** Strongly connected components of more than one node (iterative Tarjan, so deep graphs do not overflow). */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number };
      const targets = graph.get(frame.node) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++] as string;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target))
          low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(target) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) found.push(component);
      }
    }
  }
  return found;
}

/** Floors of one workspace, lowest first: a path prefix under `<ws>/src/` (or a file) and the floor's name. */
export type Floors = readonly (readonly [prefix: string, floor: string])[];

/** The floor of a path relative to the root, or undefined when it lies on none. */
export function floorOf(floors: Floors, workspace: string, path: string): string | undefined {
  const prefix = `${workspace}/src/`;
  if (!path.startsWith(prefix)) return undefined;
  const inside = path.slice(prefix.length);
  return floors.find(([start]) => (start.endsWith('/') ? inside.startsWith(start) : inside === start))?.[1];
}

/** The floor names of a workspace in order, lowest first. */
export const floorOrder = (floors: Floors) => [...new Set(floors.map(([, floor]) => floor))];

/** Files of a workspace outside its tests. */
export const isTestFile = (path: string) => /\.test\.tsx?$/.test(path) || /\/testing\//.test(path);

/** The figures of one workspace: files in circles, upward imports between floors, the longest function per floor. */
export function figuresOf(files: readonly SourceFile[], workspace: string, floors: Floors): string[] {
  const circles = circlesOf(files);
  const order = floorOrder(floors);
  let upward = 0;
  for (const file of files) {
    const from = floorOf(floors, workspace, file.path);
    if (!from) continue;
    for (const edge of file.imports) {
      const to = edge.target ? floorOf(floors, workspace, edge.target) : undefined;
      if (to && order.indexOf(to) > order.indexOf(from)) upward++;
    }
  }
  const lines = [
    `${workspace}: ${files.length} files; ${circles.reduce((n, c) => n + c.files.length, 0)} in ${circles.length} circle(s) ` +
      `(largest ${Math.max(0, ...circles.map((c) => c.files.length))}, ` +
      `${circles.filter((c) => c.typeOnly).length} type-only); ${upward} upward import(s)`,
  ];
  for (const floor of [...order, '(no floor)']) {
    const own = files.filter(
      (file) => !isTestFile(file.path) && (floorOf(floors, workspace, file.path) ?? '(no floor)') === floor,
    );
    const top = own.reduce<SourceFile | undefined>(
      (best, file) => (best && best.longest.lines >= file.longest.lines ? best : file),
      undefined,
    );
    if (top)
      lines.push(
        `  ${floor}: ${own.length} files, longest function ${top.longest.name} ${top.longest.lines} lines (${top.path})`,
      );
  }
  return lines;
}
