import { defineConfig } from 'vitest/config';

/** One unit and one integration project per workspace: `*.test.ts` does no I/O, `*.int.test.ts` may. */
const workspaces = ['core', 'api', 'relay'] as const;

export default defineConfig({
  test: {
    projects: workspaces.flatMap((name) => [
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
    ]),
  },
});
