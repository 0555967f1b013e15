/**
 * The Dockerfile and .dockerignore (make image): the repository's own pass every check, and each check catches
 * the mistake it is for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDockerfile, ENTRY_POINTS, isIgnored } from './testing/dockerfile.ts';

const ROOT = join(import.meta.dirname, '..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8');

describe('Dockerfile', () => {
  it('passes every check', () => {
    expect(checkDockerfile(dockerfile, ROOT)).toEqual([]);
  });

  it('builds on Node.js 24 and starts the server as a non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
    expect(dockerfile).toMatch(/^USER 10001:10001$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "--max-semi-space-size=16", "server\/dist\/main\.js"\]$/m);
  });

  it('keeps every entry point the chart runs in the build context', () => {
    for (const entry of ENTRY_POINTS) expect(isIgnored(entry, dockerignore)).toBe(false);
    expect(isIgnored('relay/src/sse.test.ts', dockerignore)).toBe(true);
    expect(isIgnored('console/node_modules/react/index.js', dockerignore)).toBe(true);
    expect(isIgnored('node_modules/fastify/package.json', dockerignore)).toBe(true);
    expect(isIgnored('.tools/node/bin/node', dockerignore)).toBe(true);
  });

  it('flags an unpinned base, a root user, shell-form commands, ADD, npm install and baked secrets', () => {
    const bad = [
      'FROM node:latest AS build',
      'WORKDIR src',
      'ADD . .',
      'RUN npm install',
      'FROM node',
      'ENV SESSION_SECRET=abc',
      'RUN apt-get install -y curl',
      'COPY --from=builder /src /app',
      'USER root',
      'CMD node server/src/main.ts',
    ].join('\n');
    const problems = checkDockerfile(bad, ROOT).join('\n');
    for (const expected of [
      'uses latest',
      'FROM node has no tag',
      'WORKDIR src is relative',
      'ADD copies',
      'use npm ci',
      'bakes a secret',
      'without --no-install-recommends',
      'RUN in the runtime stage',
      'names no earlier stage',
      'runs as root',
      'shell form',
      'server/src/main.ts (run by the chart) is not copied',
      'server/dist/main.js (run by the chart) is built by no stage',
      'server/dist/tracing-register.js (run by the chart) is not copied',
    ])
      expect(problems).toContain(expected);
  });
});
