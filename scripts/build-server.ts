/**
 * The server as plain JavaScript (docs/adr/0038): `server/src/main.ts` and the files Node starts by name beside it
 * (the PGlite worker, the tracing preload) bundled by esbuild into `server/dist/`, our workspaces (@turnpike/*)
 * inside, npm packages left as imports of node_modules. The role modules main.ts imports lazily stay lazy: each
 * dynamic import is a chunk of its own, loaded when it is first needed. A process then parses JavaScript instead of
 * having Node strip the types of ~800 .ts files at every start (bench/README.md "Memory").
 *
 * What the sources find by path at run time, `new URL('<relative>', import.meta.url)`, keeps pointing where it
 * pointed: at another entry point (the worker) it names that entry's built file; at anything else (the migrations,
 * the console's built files) it names the same file or folder as before, relative to the bundle, so `server/dist`
 * must sit beside the rest of the tree as it does here (the image keeps the layout). Any other `import.meta.url`
 * fails the build rather than point somewhere else unnoticed.
 *
 * Usage: node scripts/build-server.ts [--outdir <dir>]   (default server/dist; prints the files and their sizes)
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');

/** Entry points: the output's name (`<name>.js`) and its source. */
export const SERVER_ENTRIES: Readonly<Record<string, string>> = {
  main: 'server/src/main.ts',
  // started by name as a worker thread (core/src/db/pglite-thread.ts)
  'pglite-worker': 'core/src/db/pglite-worker.ts',
  // started by name as a child process that makes a new embedded data folder (core/src/db/pglite-initdb.ts)
  'pglite-initdb-process': 'core/src/db/pglite-initdb-process.ts',
  // `node --import` before main.js when tracing is on (the chart): it must share main's module of relay spans,
  // which a .ts copy of it would not
  'tracing-register': 'relay/src/metrics/tracing-register.ts',
};

const SELF_URL = /new URL\((['"])(\.{1,2}\/[^'"]*)\1,\s*import\.meta\.url\)/g;

/**
 * Our workspaces are bundled, every other package is imported from node_modules at run time (its own files,
 * `package.json` reads and native parts as they are installed).
 */
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@turnpike/') ? undefined : { path: args.path, external: true },
    );
  },
};

/** `new URL('<relative>', import.meta.url)` in our sources, resolved as it was at the source's place. */
function sourceRelativeUrls(outdir: string): Plugin {
  const entryOutputs = new Map(
    Object.entries(SERVER_ENTRIES).map(([name, source]) => [path.join(root, source), `./${name}.js`]),
  );
  return {
    name: 'source-relative-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const contents = source.replace(SELF_URL, (_match, _quote: string, relative: string) => {
          const target = path.resolve(path.dirname(args.path), relative);
          const entry = entryOutputs.get(target);
          if (entry) return `new URL(${JSON.stringify(entry)}, import.meta.url)`;
          const fromBundle = path.relative(outdir, target).split(path.sep).join('/');
          return `new URL(${JSON.stringify(fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`)}, import.meta.url)`;
        });
        const rest = contents.replace(/new URL\("[^"]*", import\.meta\.url\)/g, '');
        if (rest.includes('import.meta.url'))
          return {
            errors: [
              {
                text: `${path.relative(root, args.path)} uses import.meta.url other than new URL('<relative path>', import.meta.url): the bundle cannot keep its meaning`,
              },
            ],
          };
        return { contents, loader: 'ts' };
      });
    },
  };
}

/** Builds the server into `outdir` (emptied first); returns the files written and their sizes in bytes. */
export async function buildServer(outdir: string): Promise<{ file: string; bytes: number }[]> {
  const out = path.resolve(outdir);
  await rm(out, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(
      Object.entries(SERVER_ENTRIES).map(([name, source]) => [name, path.join(root, source)]),
    ),
    outdir: out,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    chunkNames: 'chunk-[hash]',
    // Class and function names as written: error names, logs and stack traces read as in the sources.
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [externalPackages, sourceRelativeUrls(out)],
  });
  return Object.entries(result.metafile.outputs)
    .map(([file, { bytes }]) => ({ file: path.relative(root, path.resolve(root, file)), bytes }))
    .sort((a, b) => b.bytes - a.bytes);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'server/dist' } } });
  const started = performance.now();
  const files = await buildServer(values.outdir);
  const code = files.filter(({ file }) => file.endsWith('.js'));
  const total = code.reduce((sum, { bytes }) => sum + bytes, 0);
  console.log(
    `built ${code.length} files (${(total / 1024).toFixed(0)} KiB of JavaScript) into ${values.outdir} in ${Math.round(performance.now() - started)} ms`,
  );
}
