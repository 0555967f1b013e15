import { abilities } from '@turnpike/core/db/schema/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('self service', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows the user their own account without the password', async () => {
    const client = await registerUser(t.app, 'kate');
    const self = await client.get('/api/user/self');
    expect(self.json().data).toMatchObject({
      username: 'kate',
      display_name: 'kate',
      role: 1,
      quota: 0,
      group: 'default',
    });
    expect(self.json().data).not.toHaveProperty('password');
    expect(self.body).not.toMatch(/scrypt\$/);
  });

  it('changes the display name and username, refusing a taken username', async () => {
    const client = await registerUser(t.app, 'leo');
    expect(
      (await client.put('/api/user/self', { display_name: 'Leo L.', username: 'leo2' })).json().success,
    ).toBe(true);
    expect((await client.get('/api/user/self')).json().data).toMatchObject({
      username: 'leo2',
      display_name: 'Leo L.',
    });
    const taken = await client.put('/api/user/self', { username: 'root' });
    expect(taken.statusCode).toBe(409);
  });

  it('changes the password only with the current one', async () => {
    const client = await registerUser(t.app, 'mia', 'mia-pass-1');
    const without = await client.put('/api/user/self', { password: 'mia-pass-2' });
    expect(without.json()).toMatchObject({ success: false, message: 'the current password is wrong' });
    const withIt = await client.put('/api/user/self', {
      password: 'mia-pass-2',
      original_password: 'mia-pass-1',
    });
    expect(withIt.json().success).toBe(true);
    expect((await new ConsoleClient(t.app).login('mia', 'mia-pass-1')).json().success).toBe(false);
    expect((await new ConsoleClient(t.app).login('mia', 'mia-pass-2')).json().success).toBe(true);
  });

  it('deregisters a user, who then cannot sign in; root cannot deregister', async () => {
    const client = await registerUser(t.app, 'ned', 'ned-pass-1');
    expect((await client.delete('/api/user/self')).json().success).toBe(true);
    expect((await new ConsoleClient(t.app).login('ned', 'ned-pass-1')).json().success).toBe(false);
    const rootDelete = await root.delete('/api/user/self');
    expect(rootDelete.statusCode).toBe(403);
  });

  it('moves invite earnings to the balance, at least one unit and never more than earned', async () => {
    const client = await registerUser(t.app, 'olga');
    const id = client.userId!;
    await t.runtime.deps.db.execute(`update users set aff_quota = 1200000 where id = ${id}`);
    const tooSmall = await client.post('/api/user/aff_transfer', { quota: 100 });
    expect(tooSmall.json()).toMatchObject({ success: false });
    expect(tooSmall.json().message).toMatch(/minimum transfer/);
    const tooMuch = await client.post('/api/user/aff_transfer', { quota: 2_000_000 });
    expect(tooMuch.json().success).toBe(false);
    const moves = await Promise.all(
      [1, 2, 3].map(() => client.post('/api/user/aff_transfer', { quota: 500_000 })),
    );
    expect(moves.filter((r) => r.json().success)).toHaveLength(2);
    expect((await client.get('/api/user/self')).json().data).toMatchObject({
      quota: 1_000_000,
      aff_quota: 200_000,
    });
  });

  it('saves notification settings with validation and never returns the webhook secret', async () => {
    const client = await registerUser(t.app, 'paul');
    const bad = await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
    });
    expect(bad.json()).toMatchObject({
      success: false,
      message: 'webhook_url is required for webhook notifications',
    });
    const zero = await client.put('/api/user/setting', { notify_type: 'email', quota_warning_threshold: 0 });
    expect(zero.json().success).toBe(false);
    const good = await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hooks.example.com/turnpike',
      webhook_secret: 'hook-secret-value',
    });
    expect(good.json().success).toBe(true);
    const self = await client.get('/api/user/self');
    expect(self.body).not.toContain('hook-secret-value');
    const setting = JSON.parse(self.json().data.setting);
    expect(setting).toMatchObject({
      notify_type: 'webhook',
      webhook_url: 'https://hooks.example.com/turnpike',
      has_webhook_secret: true,
    });
    // Saving again without a secret keeps the stored one.
    await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: 1000,
      webhook_url: 'https://hooks.example.com/turnpike',
    });
    expect(JSON.parse((await client.get('/api/user/self')).json().data.setting).has_webhook_secret).toBe(
      true,
    );
  });

  it('lists usable groups with ratios, for users and visitors', async () => {
    await root.put('/api/option/', {
      key: 'GroupRatio',
      value: JSON.stringify({ default: 1, vip: 2, svip: 0.5 }),
    });
    await root.put('/api/option/', {
      key: 'UserUsableGroups',
      value: JSON.stringify({ default: 'Default', vip: 'VIP' }),
    });
    const client = await registerUser(t.app, 'quinn');
    expect((await client.get('/api/user/self/groups')).json().data).toEqual({
      default: { ratio: 1, desc: 'Default' },
      vip: { ratio: 2, desc: 'VIP' },
    });
    const visitor = await t.app.inject({ method: 'GET', url: '/api/user/groups' });
    expect(Object.keys(visitor.json().data)).toEqual(['default', 'vip']);
    expect((await root.get('/api/group/')).json().data).toEqual(['default', 'vip', 'svip']);
  });

  it("lists the models of enabled channels in the user's groups", async () => {
    await t.runtime.deps.db.insert(abilities).values([
      { group: 'default', model: 'gpt-4o', channelId: 1, enabled: true },
      { group: 'default', model: 'gpt-4o', channelId: 2, enabled: true },
      { group: 'default', model: 'old-model', channelId: 3, enabled: false },
      { group: 'svip', model: 'secret-model', channelId: 4, enabled: true },
      { group: 'vip', model: 'claude-3-5-sonnet', channelId: 5, enabled: true },
    ]);
    const client = await registerUser(t.app, 'rita');
    expect((await client.get('/api/user/models')).json().data).toEqual(['claude-3-5-sonnet', 'gpt-4o']);
  });
});
