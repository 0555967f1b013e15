/**
 * A build of the gateway to measure (bench/cost.ts): a directory that holds a checkout with its dependencies, or
 * any commit of this repository, made into one: a `git worktree` of it in a temporary folder with its own
 * `npm ci --prefer-offline` (and this checkout's `.tools/node` linked in, as the Makefile expects). Such a build is
 * removed afterwards unless COST_KEEP_BUILDS=1, which keeps it and reuses it next time (a commit does not change).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Build {
  /** Where its sources and node_modules are. */
  readonly dir: string;
  /** What the tables call it: the commit, `+ changes` when its tree differs from it. */
  readonly label: string;
  /** The all-in-one server entry of that commit (it moved from api/ to server/ along the way). */
  readonly entry: string;
  /** Removes a worktree made for it (nothing for a checkout given as a directory). */
  release(): void;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function entryOf(dir: string): string {
  for (const entry of ['server/src/main.ts', 'api/src/server.ts'])
    if (existsSync(path.join(dir, entry))) return path.join(dir, entry);
  throw new Error(`${dir} has no server entry (server/src/main.ts or api/src/server.ts)`);
}

function labelOf(dir: string): string {
  try {
    const commit = git(dir, 'rev-parse', '--short', 'HEAD');
    return git(dir, 'status', '--porcelain', '--untracked-files=no') ? `${commit} + changes` : commit;
  } catch {
    return path.basename(dir);
  }
}

const keepBuilds = () => process.env.COST_KEEP_BUILDS === '1';

/** A directory given as it is; anything else is read as a commit of the repository at `root`. */
export function prepareBuild(spec: string, root: string): Build {
  if (existsSync(spec) && statSync(spec).isDirectory()) {
    const dir = path.resolve(spec);
    if (!existsSync(path.join(dir, 'node_modules')))
      throw new Error(`${dir} has no node_modules: run npm ci --prefer-offline there first`);
    return { dir, label: labelOf(dir), entry: entryOf(dir), release() {} };
  }
  const commit = git(root, 'rev-parse', '--verify', `${spec}^{commit}`);
  const dir = path.join(os.tmpdir(), 'turnpike-cost-builds', commit);
  const ready = path.join(dir, 'node_modules', '.turnpike-cost-ready');
  if (!existsSync(ready)) {
    process.stdout.write(`building ${spec} (${commit.slice(0, 7)}) in ${dir}: git worktree, npm ci\n`);
    if (existsSync(dir)) {
      git(root, 'worktree', 'remove', '--force', dir);
      rmSync(dir, { recursive: true, force: true });
    }
    mkdirSync(path.dirname(dir), { recursive: true });
    git(root, 'worktree', 'add', '--detach', dir, commit);
    const node = path.join(root, '.tools', 'node');
    if (existsSync(node)) {
      mkdirSync(path.join(dir, '.tools'), { recursive: true });
      symlinkSync(realpathSync(node), path.join(dir, '.tools', 'node'));
    }
    // npm runs the install scripts with the node first on PATH: this one (Node 24), as the Makefile would.
    const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PATH },
    });
    writeFileSync(ready, `${commit}\n`);
  }
  return {
    dir,
    label: commit.slice(0, 7),
    entry: entryOf(dir),
    release() {
      if (keepBuilds()) {
        process.stdout.write(`kept ${dir} (git worktree remove --force ${dir} removes it)\n`);
        return;
      }
      git(root, 'worktree', 'remove', '--force', dir);
    },
  };
}
