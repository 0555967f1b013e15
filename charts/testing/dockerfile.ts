/**
 * Checks of the Dockerfile in the spirit of hadolint (which is a Haskell binary, not on npm), on the parse tree of
 * `dockerfile-ast` (the parser of the Dockerfile language server): pinned base images, a non-root runtime user,
 * exec-form commands, COPY over ADD, `npm ci`, no secrets in ENV, a runtime stage that installs nothing, and that
 * every file the chart runs (the entry points of each role) is copied into the image and not excluded by
 * .dockerignore. `node charts/testing/dockerfile.ts Dockerfile` prints the problems (make image).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';

/** The files the chart's containers run (charts/turnpike/templates), or build them from (the server's source). */
export const ENTRY_POINTS = ['server/src/main.ts', 'operator/src/main.ts', 'core/src/db/migrate-cli.ts'];
/** The files the chart runs that a build stage makes (`node scripts/build-server.ts`, docs/adr/0038). */
export const BUILT_ENTRY_POINTS = ['server/dist/main.js', 'server/dist/tracing-register.js'];

const SECRET_NAME = /SECRET|PASSWORD|TOKEN|API_?KEY|CREDENTIAL/i;

/** A .dockerignore pattern as a regular expression over context-relative paths (and what lies below them). */
function ignoreRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
      if (pattern[i] === '/') source += '/?';
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}(/.*)?$`);
}

/** Whether .dockerignore keeps `path` out of the build context. */
export function isIgnored(path: string, dockerignore: string): boolean {
  let ignored = false;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+/, '').replace(/\/+$/, '');
    if (ignoreRegex(pattern).test(path)) ignored = !negated;
  }
  return ignored;
}

/** Problems found in `dockerfile` (text), whose build context is `contextDir`. */
export function checkDockerfile(dockerfile: string, contextDir: string): string[] {
  const problems: string[] = [];
  const parsed = DockerfileParser.parse(dockerfile);
  const ignorePath = join(contextDir, '.dockerignore');
  const dockerignore = existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8') : '';
  if (!dockerignore)
    problems.push('no .dockerignore: the whole folder (node_modules, .git) becomes the context');
  for (const needed of ['.git', '**/node_modules', '.tools'])
    if (dockerignore && !isIgnored(needed.replace('**/', ''), dockerignore))
      problems.push(`.dockerignore does not exclude ${needed}`);

  const args = new Map<string, string>();
  for (const arg of parsed.getInitialARGs()) {
    const property = arg.getProperty();
    if (property?.getName()) args.set(property.getName(), property.getValue() ?? '');
  }
  const expand = (text: string) =>
    text.replace(/\$\{?(\w+)\}?/g, (_all, name: string) => args.get(name) ?? '');

  const froms = parsed.getFROMs();
  if (froms.length < 2) problems.push('one stage only: build tools end up in the runtime image');
  const stages: string[] = [];
  for (const from of froms) {
    const image = expand(from.getImage() ?? '');
    const [name, tag] = image.includes('@') ? [image, 'digest'] : image.split(/:(?=[^/]+$)/);
    if (!stages.includes(name as string)) {
      if (!tag) problems.push(`line ${from.getRange().start.line + 1}: FROM ${image} has no tag`);
      else if (tag === 'latest')
        problems.push(`line ${from.getRange().start.line + 1}: FROM ${image} uses latest`);
    }
    const stage = from.getBuildStage();
    if (stage) stages.push(stage);
  }

  const instructions = parsed.getInstructions();
  const lastFrom = froms.at(-1);
  const finalStart = lastFrom ? lastFrom.getRange().start.line : 0;
  let user: string | undefined;
  let hasExecCommand = false;
  let buildsServer = false;
  const copied: string[] = [];
  for (const instruction of instructions) {
    const keyword = instruction.getKeyword();
    const line = instruction.getRange().start.line;
    const where = `line ${line + 1}`;
    const content = instruction.getArgumentsContent() ?? '';
    // The instruction's own text after the keyword: flags included (getArgumentsContent leaves them out).
    const text = instruction.getTextContent().slice(keyword.length).trim();
    const isFinal = line >= finalStart;
    if (keyword === 'ADD') problems.push(`${where}: ADD copies and unpacks implicitly; use COPY`);
    if (keyword === 'WORKDIR' && !content.startsWith('/'))
      problems.push(`${where}: WORKDIR ${content} is relative`);
    if (keyword === 'RUN') {
      if (/\bnpm (install|i)\b/.test(content))
        problems.push(`${where}: npm install ignores the lockfile; use npm ci`);
      if (/apt-get install/.test(content) && !content.includes('--no-install-recommends'))
        problems.push(`${where}: apt-get install without --no-install-recommends`);
      if (isFinal)
        problems.push(`${where}: RUN in the runtime stage (install in a build stage, copy the result)`);
      else if (/\bnode scripts\/build-server\.ts\b/.test(content)) buildsServer = true;
    }
    if (keyword === 'ENV')
      for (const name of content.match(/\b[A-Z_][A-Z0-9_]*(?==)/g) ?? [])
        if (SECRET_NAME.test(name)) problems.push(`${where}: ENV ${name} bakes a secret into the image`);
    if (keyword === 'COPY') {
      const from = /--from=(\S+)/.exec(text)?.[1];
      const parts = content.split(/\s+/).filter((part) => part && !part.startsWith('--'));
      if (from !== undefined && !stages.includes(from))
        problems.push(`${where}: COPY --from=${from} names no earlier stage`);
      if (from === undefined)
        for (const source of parts.slice(0, -1)) {
          if (source === '.') continue;
          if (!existsSync(join(contextDir, source))) problems.push(`${where}: COPY ${source}: no such file`);
          else if (isIgnored(source, dockerignore))
            problems.push(`${where}: COPY ${source} is in .dockerignore`);
        }
      if (isFinal && from !== undefined)
        copied.push(...parts.slice(0, -1).map((p) => p.replace(/^\/src\//, '')));
    }
    if (isFinal && keyword === 'USER') user = content.split(':')[0];
    if (isFinal && (keyword === 'CMD' || keyword === 'ENTRYPOINT')) {
      if (content.trim().startsWith('[')) hasExecCommand = true;
      else problems.push(`${where}: ${keyword} in shell form: signals do not reach node`);
    }
  }
  if (user === undefined || user === '0' || user === 'root')
    problems.push('the runtime stage runs as root: set USER to a numeric non-root id');
  else if (!/^\d+$/.test(user))
    problems.push(`USER ${user}: use a numeric id (runAsNonRoot cannot check names)`);
  if (!hasExecCommand) problems.push('the runtime stage has no CMD or ENTRYPOINT in exec form');

  for (const entry of ENTRY_POINTS) {
    if (!existsSync(join(contextDir, entry))) continue;
    if (isIgnored(entry, dockerignore)) problems.push(`${entry} (run by the chart) is in .dockerignore`);
    if (!copied.some((path) => entry === path || entry.startsWith(`${path.replace(/\/$/, '')}/`)))
      problems.push(`${entry} (run by the chart) is not copied into the runtime stage`);
  }
  for (const entry of BUILT_ENTRY_POINTS) {
    if (!buildsServer)
      problems.push(`${entry} (run by the chart) is built by no stage (node scripts/build-server.ts)`);
    if (!copied.some((path) => entry === path || entry.startsWith(`${path.replace(/\/$/, '')}/`)))
      problems.push(`${entry} (run by the chart) is not copied into the runtime stage`);
  }
  return problems;
}

if (import.meta.main) {
  const file = process.argv[2] ?? 'Dockerfile';
  const problems = checkDockerfile(readFileSync(file, 'utf8'), dirname(file));
  for (const problem of problems) process.stderr.write(`${file}: ${problem}\n`);
  if (problems.length === 0) process.stdout.write(`${file}: no problems\n`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
