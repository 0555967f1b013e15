import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./check-imports.ts', import.meta.url));
const WORKSPACES = ['core', 'api', 'relay', 'operator', 'console', 'server'];

/** A repository tree of empty workspaces holding `files` (path → source), checked as `make lint` checks ours. */
function check(files: Record<string, string>): { status: number | null; output: string } {
  const root = mkdtempSync(join(os.tmpdir(), 'turnpike-check-imports-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('package.json', JSON.stringify({ devDependencies: {} }));
  for (const workspace of WORKSPACES) {
    // Each declares every workspace: only the layers are in question here.
    const dependencies = Object.fromEntries(WORKSPACES.map((w) => [`@turnpike/${w}`, '*']));
    write(`${workspace}/package.json`, JSON.stringify({ dependencies }));
    mkdirSync(join(root, workspace, 'src'), { recursive: true });
  }
  for (const [path, text] of Object.entries(files)) write(path, text);
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the import check (make lint)', { timeout: 60_000 }, () => {
  it('catches a layer crossed through a relative path and a relay floor imported upwards', () => {
    const { status, output } = check({
      // core reaching into the relay and the console API by path instead of by package
      'core/src/billing/planted.ts': "import { x } from '../../../relay/src/pipeline/exchange.ts';\n",
      'core/src/planted-dynamic.ts': "export const load = () => import('../../api/src/app.ts');\n",
      // api and relay beside each other: neither may import the other
      'api/src/modules/planted.ts': "export { y } from '../../../relay/src/sse.ts';\n",
      // the operator above core only
      'operator/src/planted.ts': "import '../../relay/src/app.ts';\n",
      // floors: providers and formats sit below books, books below the pipeline, the pipeline below http
      'relay/src/providers/openai/planted.ts': "import { step } from '../../pipeline/attempts.ts';\n",
      'relay/src/books/planted.ts': "import { step } from '../pipeline/settle.ts';\n",
      'relay/src/pipeline/planted.ts': "import { door } from '../http/front-door.ts';\n",
      'relay/src/contract.ts': "import type { Wire } from './formats/openai/wire.ts';\n",
      // a relay test file is held to the same floors
      'relay/src/formats/openai/planted.test.ts': "import { relay } from '../../pipeline/relay.ts';\n",
    });
    expect(status).toBe(1);
    const lines = output.split('\n');
    const about = (file: string) => lines.filter((line) => line.startsWith(`${file}:`));
    expect(about('core/src/billing/planted.ts')).toEqual([
      'core/src/billing/planted.ts: imports ../../../relay/src/pipeline/exchange.ts (core → relay)',
    ]);
    expect(about('core/src/planted-dynamic.ts')).toEqual([
      'core/src/planted-dynamic.ts: imports ../../api/src/app.ts (core → api)',
    ]);
    expect(about('api/src/modules/planted.ts')).toEqual([
      'api/src/modules/planted.ts: imports ../../../relay/src/sse.ts (api → relay)',
    ]);
    expect(about('operator/src/planted.ts')).toEqual([
      'operator/src/planted.ts: imports ../../relay/src/app.ts (operator → relay)',
    ]);
    expect(about('relay/src/providers/openai/planted.ts')).toEqual([
      'relay/src/providers/openai/planted.ts: imports ../../pipeline/attempts.ts (relay floor formats/providers → pipeline, upwards)',
    ]);
    expect(about('relay/src/books/planted.ts')).toEqual([
      'relay/src/books/planted.ts: imports ../pipeline/settle.ts (relay floor books → pipeline, upwards)',
    ]);
    expect(about('relay/src/pipeline/planted.ts')).toEqual([
      'relay/src/pipeline/planted.ts: imports ../http/front-door.ts (relay floor pipeline → http, upwards)',
    ]);
    expect(about('relay/src/contract.ts')).toEqual([
      'relay/src/contract.ts: imports ./formats/openai/wire.ts (relay floor contract → formats/providers, upwards)',
    ]);
    expect(about('relay/src/formats/openai/planted.test.ts')).toEqual([
      'relay/src/formats/openai/planted.test.ts: imports ../../pipeline/relay.ts (relay floor formats/providers → pipeline, upwards)',
    ]);
    expect(output).toMatch(/^import check: 9 problem\(s\)/);
  });

  it('passes imports that point down, relative or by package', () => {
    const { status, output } = check({
      'server/src/main.ts': "import { buildApp } from '../../api/src/app.ts';\nimport '@turnpike/relay';\n",
      'api/src/app.ts': "import { loadConfig } from '../../core/src/config.ts';\n",
      'relay/src/http/front-door.ts': "import { relay } from '../pipeline/relay.ts';\n",
      'relay/src/pipeline/relay.ts':
        "import { settle } from '../books/settle.ts';\nimport '../formats/openai/wire.ts';\n",
      'relay/src/books/settle.ts': "import { wire } from '../formats/openai/wire.ts';\n",
      // a provider builds on a format: one floor
      'relay/src/providers/azure/index.ts': "import { wire } from '../../formats/openai/wire.ts';\n",
      'relay/src/formats/openai/wire.ts': "import type { RelayRequest } from '../../contract.ts';\n",
      // folders that are no floor are not held to the floors
      'relay/src/state/cache.ts': "import { relay } from '../pipeline/relay.ts';\n",
    });
    expect(output).toMatch(/layers point one way/);
    expect(status).toBe(0);
  });

  it("catches an upward import in core's and the console's floors", () => {
    const { status, output } = check({
      // core: the tables below the repositories, the domain below the tables
      'core/src/db/schema/planted.ts': "import { repo } from '../../repos/user.repo.ts';\n",
      'core/src/domain/planted.ts': "import type { Db } from '../db/client.ts';\n",
      // console: the UI kit below the features, the features below the routes
      'console/src/components/ui/planted.tsx': "import { Page } from '../../features/logs/page.tsx';\n",
      'console/src/features/logs/planted.ts': "import { Route } from '../../routes/logs.tsx';\n",
    });
    expect(status).toBe(1);
    expect(
      output
        .split('\n')
        .filter((line) => line.includes('planted'))
        .sort(),
    ).toEqual([
      'console/src/components/ui/planted.tsx: imports ../../features/logs/page.tsx (console floor components → features, upwards)',
      'console/src/features/logs/planted.ts: imports ../../routes/logs.tsx (console floor features → routes, upwards)',
      'core/src/db/schema/planted.ts: imports ../../repos/user.repo.ts (core floor db → repos, upwards)',
      'core/src/domain/planted.ts: imports ../db/client.ts (core floor domain → db, upwards)',
    ]);
  });

  it('catches a circle of two files that import values, and a type-only circle of five', () => {
    const { status, output } = check({
      // two state files calling each other: no floor is crossed, but the circle fails
      'relay/src/state/planted-a.ts': "import { b } from './planted-b.ts';\nexport const a = () => b;\n",
      'relay/src/state/planted-b.ts': "import { a } from './planted-a.ts';\nexport const b = () => a;\n",
      // five files whose types name each other round a ring
      ...Object.fromEntries(
        [0, 1, 2, 3, 4].map((n) => [
          `relay/src/limits/ring-${n}.ts`,
          `import type { T${(n + 1) % 5} } from './ring-${(n + 1) % 5}.ts';\nexport type T${n} = { next: T${(n + 1) % 5} };\n`,
        ]),
      ),
    });
    expect(status).toBe(1);
    const lines = output.split('\n');
    expect(lines).toContain(
      'relay/src/state/planted-a.ts: in a circle of 2 files: relay/src/state/planted-a.ts, relay/src/state/planted-b.ts',
    );
    expect(lines).toContain(
      'relay/src/limits/ring-0.ts: in a circle of 5 files (type-only): ' +
        [0, 1, 2, 3, 4].map((n) => `relay/src/limits/ring-${n}.ts`).join(', '),
    );
    expect(output).toMatch(/^import check: 2 problem\(s\)/);
  });

  it("lets a circle of four files that only name each other's types pass", () => {
    const { status, output } = check({
      ...Object.fromEntries(
        [0, 1, 2, 3].map((n) => [
          `relay/src/limits/ring-${n}.ts`,
          `import type { T${(n + 1) % 4} } from './ring-${(n + 1) % 4}.ts';\nexport type T${n} = { next: T${(n + 1) % 4} };\n`,
        ]),
      ),
    });
    expect(output).toMatch(/no circles beyond a few type-only files/);
    expect(status).toBe(0);
  });
});
