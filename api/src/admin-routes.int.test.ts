import { Role } from '@turnpike/core/domain/users';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gateRoleOf } from './modules/audit/audit-hook.ts';
import { ConsoleClient, createTestApp, registerUser, setupRoot, type TestApp } from './testing/test-app.ts';

/**
 * Every route the app registers, seen through an `onRoute` hook added to each Fastify instance the moment it is
 * created, before any module registers its routes. The table is derived, never written down, so admin routes
 * other modules add are covered without touching this file.
 */
const seen = vi.hoisted(() => ({ routes: [] as RouteOptions[] }));

vi.mock('fastify', async (importOriginal) => {
  const original = await importOriginal<typeof import('fastify')>();
  const build = original.default as unknown as (options?: object) => FastifyInstance;
  const create = ((options?: object) => {
    const app = build(options);
    app.addHook('onRoute', (route) => {
      seen.routes.push(route);
    });
    return app;
  }) as unknown as typeof original.default;
  return { ...original, default: create, fastify: create };
});

interface GatedRoute {
  readonly method: string;
  readonly url: string;
  readonly minRole: number;
}

/** Placeholder values for path parameters: ids become 1, wildcards a harmless segment. */
const fillParams = (url: string) =>
  url.replace(/:[A-Za-z0-9_]+(\([^)]*\))?/g, '1').replace(/\*$/, 'placeholder');

function adminRoutes(app: FastifyInstance): GatedRoute[] {
  const table = new Map<string, GatedRoute>();
  for (const route of seen.routes) {
    const minRole = gateRoleOf(route);
    if (minRole === undefined || minRole < Role.Admin) continue;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // Fastify adds a HEAD twin to every GET; the GET itself is checked.
      if (method === 'HEAD') continue;
      // A route of another Fastify instance (the trailing slash is optional in this app's router).
      const has = (url: string) => app.hasRoute({ method, url });
      if (!has(route.url) && !has(route.url.replace(/(.)\/$/, '$1'))) continue;
      table.set(`${method} ${route.url}`, { method, url: route.url, minRole });
    }
  }
  return [...table.values()].sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
}

describe('every admin route of the route table', () => {
  let t: TestApp;
  let routes: GatedRoute[];
  let member: ConsoleClient;
  let admin: ConsoleClient;

  beforeAll(async () => {
    seen.routes.length = 0;
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT: '100000', CRITICAL_RATE_LIMIT: '1000' } });
    routes = adminRoutes(t.app);
    const root = await setupRoot(t.app);
    member = await registerUser(t.app, 'member');
    admin = await registerUser(t.app, 'helper');
    const promoted = await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
    if (!promoted.json().success) throw new Error(`promote failed: ${promoted.body}`);
    // A role change ends the user's sessions (ADR 0020): the new administrator signs in again.
    if (!(await admin.login('helper', 'user-password-1')).json().success)
      throw new Error('admin sign-in failed');
  });
  afterAll(async () => {
    await t.close();
  });

  it('is derived from the app and holds the known admin and root routes', () => {
    expect(routes.length).toBeGreaterThan(5);
    const keys = routes.map((r) => `${r.method} ${r.url}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        'GET /api/user/',
        'GET /api/user/search',
        'GET /api/user/:id',
        'POST /api/user/',
        'PUT /api/user/',
        'DELETE /api/user/:id',
        'POST /api/user/manage',
        'GET /api/option/',
        'PUT /api/option/',
      ]),
    );
    // Administrators reach the option routes; which keys they may read and write is checked per key there.
    expect(routes.find((r) => r.url === '/api/option/')?.minRole).toBe(Role.Admin);
    expect(routes.find((r) => r.url === '/api/user/manage')?.minRole).toBe(Role.Admin);
    // Routes for signed-in users are not in the table.
    expect(keys).not.toContain('GET /api/user/self');
  });

  it('answers 401 to a visitor on each of them', async () => {
    const visitor = new ConsoleClient(t.app);
    const failures: string[] = [];
    for (const route of routes) {
      const response = await visitor.request(
        route.method as 'GET',
        fillParams(route.url),
        route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      );
      if (response.statusCode !== 401 || response.json().success !== false) {
        failures.push(
          `${route.method} ${route.url} -> ${response.statusCode} ${response.body.slice(0, 120)}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to a signed-in regular user on each of them', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const response = await member.request(
        route.method as 'GET',
        fillParams(route.url),
        route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      );
      if (response.statusCode !== 403 || response.json().success !== false) {
        failures.push(
          `${route.method} ${route.url} -> ${response.statusCode} ${response.body.slice(0, 120)}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to an administrator on each root-only route', async () => {
    // None today: root's options are refused per key (api/src/modules/options/options.int.test.ts).
    const rootOnly = routes.filter((r) => r.minRole >= Role.Root);
    const failures: string[] = [];
    for (const route of rootOnly) {
      const response = await admin.request(
        route.method as 'GET',
        fillParams(route.url),
        route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      );
      if (response.statusCode !== 403 || response.json().success !== false) {
        failures.push(
          `${route.method} ${route.url} -> ${response.statusCode} ${response.body.slice(0, 120)}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });
});
