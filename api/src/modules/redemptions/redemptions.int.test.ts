import { logs } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('redemption codes', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates codes in a batch and answers their keys', async () => {
    const created = await root.post('/api/redemption/', { name: 'promo', quota: 100000, count: 3 });
    expect(created.json().success).toBe(true);
    const keys: string[] = created.json().data;
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(keys).size).toBe(3);
    const list = (await root.get('/api/redemption/?p=1&page_size=2')).json().data;
    expect(list).toMatchObject({ total: 3, page: 1, page_size: 2 });
    expect(list.items[0]).toMatchObject({ name: 'promo', quota: 100000, status: 1, used_user_id: 0 });
  });

  it('refuses a bad name, quota or count and stores nothing', async () => {
    const before = (await root.get('/api/redemption/')).json().data.total;
    const cases: [unknown, RegExp][] = [
      [{ name: '', quota: 1, count: 1 }, /name is required/],
      [{ name: 'x'.repeat(21), quota: 1, count: 1 }, /name must be 1 to 20/],
      [{ name: 'a', quota: 1, count: 0 }, /count must be 1 to 100/],
      [{ name: 'a', quota: 1, count: 101 }, /count must be 1 to 100/],
      [{ name: 'a', quota: 'lots', count: 1 }, /quota must be an integer/],
    ];
    for (const [body, message] of cases) {
      const response = await root.post('/api/redemption/', body);
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toMatch(message);
    }
    expect((await root.get('/api/redemption/')).json().data.total).toBe(before);
  });

  it('searches, gets, edits, switches status and deletes', async () => {
    await root.post('/api/redemption/', { name: 'spring', quota: 5, count: 1 });
    const found = (await root.get('/api/redemption/search?keyword=spri')).json().data;
    expect(found.total).toBe(1);
    const id = found.items[0].id;
    expect((await root.get(`/api/redemption/search?keyword=${id}`)).json().data.items[0].id).toBe(id);
    const edited = await root.put('/api/redemption/', { id, name: 'summer', quota: 50 });
    expect(edited.json().data).toMatchObject({ name: 'summer', quota: 50 });
    const off = await root.put('/api/redemption/?status_only=true', { id, status: 2, name: 'ignored' });
    expect(off.json().data).toMatchObject({ status: 2, name: 'summer' });
    expect((await root.get(`/api/redemption/${id}`)).json().data.status).toBe(2);
    expect((await root.delete(`/api/redemption/${id}/`)).json().success).toBe(true);
    expect((await root.get(`/api/redemption/${id}`)).statusCode).toBe(404);
  });

  it('is for admins only', async () => {
    const user = await registerUser(t.app, 'nosy');
    for (const [method, url] of [
      ['GET', '/api/redemption/'],
      ['GET', '/api/redemption/search?keyword=a'],
      ['GET', '/api/redemption/1'],
      ['POST', '/api/redemption/'],
      ['PUT', '/api/redemption/'],
      ['DELETE', '/api/redemption/1'],
    ] as const) {
      expect(
        (await user.request(method, url, method === 'GET' || method === 'DELETE' ? undefined : {}))
          .statusCode,
      ).toBe(403);
    }
  });

  it('redeems a code once under 20 concurrent requests, credits once and logs a top-up', async () => {
    const [key] = (await root.post('/api/redemption/', { name: 'race', quota: 250000, count: 1 })).json()
      .data;
    const users = await Promise.all(Array.from({ length: 4 }, (_, i) => registerUser(t.app, `racer${i}`)));
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => users[i % users.length]!.post('/api/user/topup', { key })),
    );
    const wins = attempts.filter((r) => r.json().success);
    expect(wins).toHaveLength(1);
    expect(wins[0]!.json().data).toBe(250000);
    for (const loss of attempts.filter((r) => !r.json().success))
      expect(loss.json().message).toBe('this redemption code is invalid or has already been used');
    const quotas = await Promise.all(
      users.map(async (u) => (await u.get('/api/user/self')).json().data.quota),
    );
    expect(quotas.reduce((a, b) => a + b, 0)).toBe(250000);
    const winner = users[quotas.indexOf(250000)]!;
    const topUpLogs = await t.runtime.deps.db
      .select()
      .from(logs)
      .where(and(eq(logs.userId, winner.userId!), eq(logs.type, LogType.TopUp)));
    expect(topUpLogs).toHaveLength(1);
    expect(topUpLogs[0]!.quota).toBe(250000);
    const code = (await root.get('/api/redemption/search?keyword=race')).json().data.items[0];
    expect(code).toMatchObject({ status: 3, used_user_id: winner.userId });
    const reenable = await root.put('/api/redemption/?status_only=true', { id: code.id, status: 1 });
    expect(reenable.json()).toMatchObject({
      success: false,
      message: expect.stringMatching(/has been used/),
    });
  });

  it('refuses an empty, unknown or disabled code without crediting', async () => {
    const user = await registerUser(t.app, 'tries');
    expect((await user.post('/api/user/topup', { key: '' })).json().message).toBe(
      'please enter the redemption code!',
    );
    expect((await user.post('/api/user/topup', { key: 'f'.repeat(32) })).json().success).toBe(false);
    const [key] = (await root.post('/api/redemption/', { name: 'off', quota: 9, count: 1 })).json().data;
    const id = (await root.get('/api/redemption/search?keyword=off')).json().data.items[0].id;
    await root.put('/api/redemption/?status_only=true', { id, status: 2 });
    expect((await user.post('/api/user/topup', { key })).json().success).toBe(false);
    expect((await user.get('/api/user/self')).json().data.quota).toBe(0);
  });
});
