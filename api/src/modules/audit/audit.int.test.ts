import { auditLogs, channels } from '@turnpike/core/db/schema/index';
import { Role } from '@turnpike/core/domain/closed-sets';
import { purgeGovernanceRows } from '@turnpike/core/runtime/governance-retention';
import { desc, eq, sql } from 'drizzle-orm';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';
import { gateRoleOf } from './audit-hook.ts';
import { auditOf, isReadOnly } from './audited-routes.ts';

/**
 * Every route the app registers, seen through an `onRoute` hook added to each Fastify instance as it is created,
 * before any module registers a route: the table is derived from the app, so a route added later is walked too.
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

interface ChangeRoute {
  readonly method: string;
  readonly url: string;
}

/** Routes an administrator's gate guards whose method changes something, as the app registered them. */
function changeRoutes(app: FastifyInstance): ChangeRoute[] {
  const table = new Map<string, ChangeRoute>();
  for (const route of seen.routes) {
    const role = gateRoleOf(route);
    if (role === undefined || role < Role.Admin) continue;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
      // A route of another Fastify instance (the trailing slash is optional in this app's router).
      const has = (url: string) => app.hasRoute({ method, url });
      if (!has(route.url) && !has(route.url.replace(/(.)\/$/, '$1'))) continue;
      table.set(`${method} ${route.url}`, { method, url: route.url });
    }
  }
  return [...table.values()];
}

const fillParams = (url: string) => url.replace(/:[A-Za-z0-9_]+/g, '1');

describe('the audit log of administrative changes', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let routes: ChangeRoute[];

  const db = () => t.runtime.deps.db;
  const rows = () => db().select().from(auditLogs).orderBy(desc(auditLogs.id));
  const count = async () =>
    (
      await db()
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(auditLogs)
    )[0]?.n ?? 0;
  const last = async () => (await rows())[0];
  const rawText = async () => JSON.stringify(await rows());

  beforeAll(async () => {
    seen.routes.length = 0;
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT: '100000', CRITICAL_RATE_LIMIT: '1000' } });
    routes = changeRoutes(t.app);
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('describes every administrative route of the app (a new route fails here until it is described)', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes).toContainEqual({ method: 'PUT', url: '/api/option/' });
    const undescribed = routes
      .filter((r) => auditOf(r.method, r.url) === undefined)
      .map((r) => `${r.method} ${r.url}`);
    expect(undescribed).toEqual([]);
  });

  it('writes exactly one row for each call of each administrative route, refused calls included', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const entry = auditOf(route.method, route.url);
      const before = await count();
      const response = await root.request(
        route.method as 'POST',
        fillParams(route.url),
        route.method === 'DELETE' ? undefined : {},
      );
      const added = (await count()) - before;
      const expected = entry && isReadOnly(entry) ? 0 : 1;
      if (added !== expected) {
        failures.push(`${route.method} ${route.url}: ${added} rows (${response.statusCode})`);
        continue;
      }
      if (expected === 1) {
        const row = await last();
        if (row?.source !== `${route.method} ${route.url}`)
          failures.push(`${route.method} ${route.url}: row names ${row?.source}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('records a channel created and re-keyed with who, where from and what changed, never the key', async () => {
    const created = await root.request('POST', '/api/channel/', {
      name: 'audited',
      type: 1,
      key: 'sk-audit-secret-key-000111222333',
      models: 'gpt-4o',
      group: 'default',
    });
    expect(created.json().success).toBe(true);
    const id = created.json().data[0].id as number;
    const row = await last();
    expect(row).toMatchObject({
      kind: 'channel',
      action: 'create',
      outcome: 'ok',
      actorType: 'user',
      actorName: 'root',
      targetIds: String(id),
      source: 'POST /api/channel/',
      ip: '127.0.0.1',
      userAgent: 'lightMyRequest',
    });
    expect(row?.actorId).toBe(root.userId);
    expect(JSON.parse(row?.after ?? '')).toMatchObject({
      name: 'audited',
      key: '[secret]',
      models: 'gpt-4o',
    });
    expect(row?.before).toBe('');

    const updated = await root.request('PUT', '/api/channel/', {
      id,
      name: 'audited-2',
      key: 'sk-audit-secret-key-444555666777',
      key_mode: 'replace',
    });
    expect(updated.json().success).toBe(true);
    const change = await last();
    expect(change).toMatchObject({ kind: 'channel', action: 'update', targetIds: String(id) });
    // Only what changed (the key replaced also rewrites the key ring's info), the key as a changed secret.
    const was = JSON.parse(change?.before ?? '');
    const now = JSON.parse(change?.after ?? '');
    expect(was).toMatchObject({ name: 'audited', key: '[secret]' });
    expect(now).toMatchObject({ name: 'audited-2', key: '[secret]' });
    for (const unchanged of ['models', 'group', 'type', 'id']) {
      expect(was).not.toHaveProperty(unchanged);
      expect(now).not.toHaveProperty(unchanged);
    }
    const text = await rawText();
    expect(text).not.toContain('000111222333');
    expect(text).not.toContain('444555666777');
  });

  it('keeps one changed price of a map, and masks option secrets and passwords', async () => {
    const ratios = { ...(t.runtime.deps.options.get('ModelRatio') as Record<string, number>), 'gpt-4o': 3 };
    await root.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify(ratios) });
    const saved = await root.put('/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ ...ratios, 'gpt-4o': 9.5 }),
    });
    expect(saved.json().success).toBe(true);
    const price = await last();
    expect(price).toMatchObject({ kind: 'option', action: 'update', targetIds: 'ModelRatio' });
    expect(JSON.parse(price?.after ?? '')).toEqual({ ModelRatio: { 'gpt-4o': 9.5 } });
    expect(JSON.parse(price?.before ?? '')).toEqual({ ModelRatio: { 'gpt-4o': 3 } });

    expect(
      (await root.put('/api/option/', { key: 'SMTPToken', value: 'smtp-password-xyz' })).json().success,
    ).toBe(true);
    const secret = await last();
    expect(JSON.parse(secret?.after ?? '')).toEqual({ SMTPToken: '[secret]' });
    expect(JSON.parse(secret?.request ?? '')).toEqual({ SMTPToken: '[secret]' });

    const member = await registerUser(t.app, 'audited1');
    const edit = await root.put('/api/user/', {
      id: member.userId,
      quota: 123_456,
      password: 'a-new-password-1',
    });
    expect(edit.json().success).toBe(true);
    const balance = await last();
    expect(balance).toMatchObject({ kind: 'user', action: 'update', targetIds: String(member.userId) });
    expect(JSON.parse(balance?.before ?? '')).toMatchObject({ quota: 0, password: '[secret]' });
    expect(JSON.parse(balance?.after ?? '')).toMatchObject({ quota: 123_456, password: '[secret]' });
    const text = await rawText();
    expect(text).not.toContain('smtp-password-xyz');
    expect(text).not.toContain('a-new-password-1');
  });

  it('names an access token as the actor when the change came through one', async () => {
    const token = await root.get('/api/user/token');
    const viaToken = new ConsoleClient(t.app);
    viaToken.accessToken = token.json().data as string;
    viaToken.userId = root.userId;
    const saved = await viaToken.put('/api/option/', { key: 'RetryTimes', value: '2' });
    expect(saved.json().success).toBe(true);
    expect(await last()).toMatchObject({ actorType: 'token', actorId: root.userId, targetIds: 'RetryTimes' });
    expect(await rawText()).not.toContain(viaToken.accessToken);
  });

  it('records a refused change as refused, with why', async () => {
    const missing = await root.request('PUT', '/api/channel/', { id: 999_999, name: 'nobody' });
    expect(missing.statusCode).toBe(404);
    expect(await last()).toMatchObject({ outcome: 'refused', targetIds: '999999', kind: 'channel' });
    expect((await last())?.message).toMatch(/not found/);
  });

  it('does not make a change whose audit row cannot be written (one transaction)', async () => {
    const [channel] = await db().select().from(channels).where(eq(channels.name, 'audited-2'));
    const retries = t.runtime.deps.options.get('RetryTimes');
    await db().execute(sql`alter table audit_logs add constraint audit_refused check (false) not valid`);
    try {
      const renamed = await root.request('PUT', '/api/channel/', { id: channel?.id, name: 'never-kept' });
      expect(renamed.statusCode).toBe(500);
      expect(renamed.json().message).toMatch(/audit record could not be written/);
      const option = await root.put('/api/option/', { key: 'RetryTimes', value: String(retries + 3) });
      expect(option.statusCode).toBe(500);
    } finally {
      await db().execute(sql`alter table audit_logs drop constraint audit_refused`);
    }
    const [after] = await db()
      .select()
      .from(channels)
      .where(eq(channels.id, channel?.id ?? 0));
    expect(after?.name).toBe('audited-2');
    // The option store had taken the value as it wrote it: the rollback's reload put the stored one back.
    await vi.waitFor(() => expect(t.runtime.deps.options.get('RetryTimes')).toBe(retries));
  });

  it('lets root read it with filters and export it as JSON lines; nobody else', async () => {
    const page = await root.get('/api/audit/?kind=option&p=1&page_size=100');
    expect(page.json().success).toBe(true);
    const items = page.json().data.items as { kind: string; target_ids: string[] }[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((item) => item.kind === 'option')).toBe(true);
    const byActor = await root.get(`/api/audit/?actor_id=${root.userId}&actor_type=token`);
    expect(byActor.json().data.items.map((i: { target_ids: string[] }) => i.target_ids)).toEqual([
      ['RetryTimes'],
    ]);

    const exported = await root.get('/api/audit/export?kind=channel');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = exported.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; id: number });
    const stored = await db().select().from(auditLogs).where(eq(auditLogs.kind, 'channel'));
    expect(lines.map((l) => l.id)).toEqual(stored.map((r) => r.id).sort((a, b) => a - b));
    expect(lines.every((l) => l.kind === 'channel')).toBe(true);

    const admin = await registerUser(t.app, 'auditadm');
    await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
    await admin.login('auditadm', 'user-password-1');
    expect((await admin.get('/api/audit/')).statusCode).toBe(403);
    expect((await admin.get('/api/audit/export')).statusCode).toBe(403);
  });

  it('deletes rows older than AuditRetentionDays and keeps the rest (0 keeps all)', async () => {
    const now = new Date('2030-06-01T00:00:00Z');
    const day = 86_400;
    const at = now.getTime() / 1000;
    await db()
      .insert(auditLogs)
      .values([
        { createdAt: at - 40 * day, actorType: 'user', kind: 'other', action: 'old', outcome: 'ok' },
        { createdAt: at - 10 * day, actorType: 'user', kind: 'other', action: 'recent', outcome: 'ok' },
      ]);
    const total = await count();
    expect(await purgeGovernanceRows(t.runtime.deps, now)).toBe(0);
    expect(await count()).toBe(total);
    await t.runtime.deps.options.set('AuditRetentionDays', '30');
    // Every row of this file but the one 10 days before `now` is older than 30 days then.
    const removed = await purgeGovernanceRows(t.runtime.deps, now);
    const left = await rows();
    expect(left.map((r) => r.action)).toEqual(['recent']);
    expect(removed).toBe(total - 1);
  });
});
