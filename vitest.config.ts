import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/** One unit and one integration project per workspace: `*.test.ts` does no I/O, `*.int.test.ts` may. */
const workspaces = ['core', 'api', 'relay', 'operator', 'server'] as const;

const serverProjects: TestProjectInlineConfiguration[] = workspaces.flatMap((name) => [
  {
    test: {
      name: `${name}:unit`,
      root: name,
      include: ['src/**/*.test.ts'],
      exclude: ['src/**/*.int.test.ts'],
    },
  },
  {
    test: {
      name: `${name}:integration`,
      root: name,
      include: ['src/**/*.int.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  },
]);

export default defineConfig({
  test: {
    projects: [
      ...serverProjects,
      {
        // the repository's own checks (make lint's scripts), run against planted trees
        test: { name: 'scripts', root: 'scripts', include: ['**/*.test.ts'] },
      },
      {
        // the bench's own arithmetic (what it reads from /proc), so its figures can be trusted
        test: { name: 'bench', root: 'bench', include: ['**/*.test.ts'] },
      },
      {
        // the Helm charts: a real helm renders them, every object is schema-checked (make chart-test)
        test: {
          name: 'charts',
          root: 'charts',
          include: ['**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // component tests of the console: jsdom, Testing Library
        test: {
          name: 'console:unit',
          root: 'console',
          environment: 'jsdom',
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
          setupFiles: ['src/testing/setup.ts'],
        },
      },
      {
        // end-to-end: a fresh server and headless Chromium, one file at a time
        test: {
          name: 'console:e2e',
          root: 'console',
          environment: 'node',
          include: ['e2e/**/*.e2e.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
