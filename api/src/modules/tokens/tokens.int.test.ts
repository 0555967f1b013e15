import { tokens } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('tokens', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a token and answers it with its 48-character sk- key', async () => {
    const amy = await registerUser(t.app, 'amy');
    const created = await amy.post('/api/token/', { name: 'laptop', remain_quota: 500000 });
    expect(created.json()).toMatchObject({
      success: true,
      data: { name: 'laptop', status: 1, expired_time: -1 },
    });
    expect(created.json().data.key).toMatch(/^sk-[0-9A-Za-z]{48}$/);
    const got = await amy.get(`/api/token/${created.json().data.id}`);
    expect(got.json().data).toMatchObject({
      key: created.json().data.key,
      remain_quota: 500000,
      user_id: amy.userId,
    });
  });

  it('refuses bad input with a clear message and stores nothing', async () => {
    const ben = await registerUser(t.app, 'ben');
    const cases: [unknown, RegExp][] = [
      [{ name: '' }, /name is required/],
      [{ name: 'x'.repeat(31) }, /at most 30/],
      [{ name: 'a', expired_time: -5 }, /expiry time format error/],
      [{ name: 'a', remain_quota: 1.5 }, /integer/],
      [{ name: 'a', allow_ips: '10.0.0.0/8\nfoo' }, /"foo" is not an IP address or CIDR range/],
      [{ name: 'a', group: 'svip' }, /cannot use the group "svip"/],
    ];
    for (const [body, message] of cases) {
      const response = await ben.post('/api/token/', body);
      expect(response.statusCode).toBe(400);
      expect(response.json().success).toBe(false);
      expect(response.json().message).toMatch(message);
    }
    expect((await ben.get('/api/token/')).json().data.total).toBe(0);
  });

  it('accepts IPs and CIDR ranges and a group the user may use', async () => {
    await root.put('/api/option/', {
      key: 'UserUsableGroups',
      value: JSON.stringify({ default: 'Default', vip: 'VIP' }),
    });
    const cat = await registerUser(t.app, 'cat');
    const created = await cat.post('/api/token/', {
      name: 'office',
      allow_ips: '10.0.0.0/8\n192.168.1.7\n2001:db8::/32',
      group: 'vip',
    });
    expect(created.json()).toMatchObject({
      success: true,
      data: { group: 'vip', allow_ips: '10.0.0.0/8\n192.168.1.7\n2001:db8::/32' },
    });
  });

  it('lists and searches own tokens only, newest first, by name and key', async () => {
    const dan = await registerUser(t.app, 'dan');
    const eve = await registerUser(t.app, 'eve');
    for (const name of ['alpha', 'beta', 'alphabet']) await dan.post('/api/token/', { name });
    await eve.post('/api/token/', { name: 'alpha-eve' });
    const list = (await dan.get('/api/token/?p=0&size=2')).json().data;
    expect(list).toMatchObject({ total: 3, page: 1, page_size: 2 });
    expect(list.items.map((i: { name: string }) => i.name)).toEqual(['alphabet', 'beta']);
    const second = (await dan.get('/api/token/?p=2&size=2')).json().data;
    expect(second.items.map((i: { name: string }) => i.name)).toEqual(['alpha']);
    const byName = (await dan.get('/api/token/search?keyword=alpha')).json().data;
    expect(byName.items.map((i: { name: string }) => i.name).sort()).toEqual(['alpha', 'alphabet']);
    const key: string = list.items[1].key;
    const byKey = (await dan.get(`/api/token/search?token=${key.slice(0, 20)}`)).json().data;
    expect(byKey.items.map((i: { name: string }) => i.name)).toEqual(['beta']);
    expect((await eve.get('/api/token/search?keyword=alpha')).json().data.total).toBe(1);
  });

  it("never lets a user read, change or delete another user's token", async () => {
    const fay = await registerUser(t.app, 'fay');
    const gus = await registerUser(t.app, 'gus');
    const id = (await fay.post('/api/token/', { name: 'mine', remain_quota: 100 })).json().data.id;
    expect((await gus.get(`/api/token/${id}`)).statusCode).toBe(404);
    expect((await gus.put('/api/token/', { id, name: 'stolen', remain_quota: 999 })).statusCode).toBe(404);
    expect((await gus.put('/api/token/?status_only=true', { id, status: 2 })).statusCode).toBe(404);
    expect((await gus.delete(`/api/token/${id}/`)).statusCode).toBe(404);
    expect((await fay.get(`/api/token/${id}`)).json().data).toMatchObject({
      name: 'mine',
      remain_quota: 100,
      status: 1,
    });
  });

  it('stores the limits of a token and refuses negative or fractional ones, changing nothing', async () => {
    const created = await root.post('/api/token/', {
      name: 'agent',
      tpm_limit: 200000,
      concurrency_limit: 4,
    });
    expect(created.json().data).toMatchObject({ rpm_limit: 0, tpm_limit: 200000, concurrency_limit: 4 });
    const { id } = created.json().data;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rpm_limit: -1 }, /rpm_limit cannot be negative/],
      [{ tpm_limit: 1.5 }, /tpm_limit must be a whole number of tokens per minute/],
      [{ concurrency_limit: '2' }, /concurrency_limit must be a whole number/],
      [{ tpm_limit: 2 ** 31 }, /tpm_limit is too large/],
    ];
    for (const [fields, message] of cases) {
      const refused = await root.put('/api/token/', { id, ...fields });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toMatch(message);
    }
    const edited = await root.put('/api/token/', { id, rpm_limit: 60, concurrency_limit: 0 });
    expect(edited.json().data).toMatchObject({ rpm_limit: 60, tpm_limit: 200000, concurrency_limit: 0 });
    const [row] = await t.runtime.deps.db.select().from(tokens).where(eq(tokens.id, id));
    expect(row).toMatchObject({ rpmLimit: 60, tpmLimit: 200000, concurrencyLimit: 0 });
  });

  it('updates fields and status, and deletes', async () => {
    const hal = await registerUser(t.app, 'hal');
    const id = (await hal.post('/api/token/', { name: 'x', remain_quota: 10 })).json().data.id;
    const edited = await hal.put('/api/token/', {
      id,
      name: 'renamed',
      unlimited_quota: true,
      model_limits_enabled: true,
      model_limits: 'gpt-4o,o3',
    });
    expect(edited.json().data).toMatchObject({
      name: 'renamed',
      unlimited_quota: true,
      model_limits: 'gpt-4o,o3',
    });
    const off = await hal.put('/api/token/?status_only=true', { id, status: 2, name: 'ignored' });
    expect(off.json().data).toMatchObject({ status: 2, name: 'renamed' });
    expect((await hal.put('/api/token/?status_only=true', { id, status: 3 })).json().message).toMatch(
      /status must be 1/,
    );
    expect((await hal.delete(`/api/token/${id}/`)).json().success).toBe(true);
    expect((await hal.get(`/api/token/${id}`)).statusCode).toBe(404);
    expect((await hal.delete(`/api/token/${id}/`)).statusCode).toBe(404);
  });

  it('refuses to re-enable an expired or exhausted token until its limits allow it', async () => {
    const kim = await registerUser(t.app, 'kim');
    const db = t.runtime.deps.db;
    const past = Math.floor(Date.now() / 1000) - 3600;
    const expired = (
      await kim.post('/api/token/', { name: 'old', remain_quota: 100, expired_time: past })
    ).json().data.id;
    await db.update(tokens).set({ status: 3 }).where(eq(tokens.id, expired));
    const refused = await kim.put('/api/token/?status_only=true', { id: expired, status: 1 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/expired and cannot be enabled/);
    expect((await kim.get(`/api/token/${expired}`)).json().data.status).toBe(3);
    const fixed = await kim.put('/api/token/', { id: expired, expired_time: -1, status: 1 });
    expect(fixed.json().data).toMatchObject({ status: 1, expired_time: -1 });

    const spent = (await kim.post('/api/token/', { name: 'spent', remain_quota: 0 })).json().data.id;
    await db.update(tokens).set({ status: 4 }).where(eq(tokens.id, spent));
    const refused2 = await kim.put('/api/token/?status_only=true', { id: spent, status: 1 });
    expect(refused2.json().message).toMatch(/used up its quota/);
    expect(
      (await kim.put('/api/token/', { id: spent, remain_quota: 5000, status: 1 })).json().data.status,
    ).toBe(1);
  });

  it('requires sign-in', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/token/' })).statusCode).toBe(401);
  });
});
