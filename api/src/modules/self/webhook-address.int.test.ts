/**
 * The save-time half of the webhook guard (docs/adr/0039): `PUT /api/user/setting` refuses an address that is
 * literally inside the gateway's network, and only root decides which ranges are allowed anyway. Delivery checks
 * names again (core/src/net/guarded-fetch.int.test.ts, server/src/webhook-guard.int.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('webhook addresses users may save', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it("refuses a webhook aimed at the gateway's own network unless root allows that range", async () => {
    const client = await registerUser(t.app, 'sybil');
    const save = (webhook_url: string) =>
      client.put('/api/user/setting', { notify_type: 'webhook', quota_warning_threshold: 1000, webhook_url });
    const inside = [
      'http://127.0.0.1:8080/internal-admin/delete-everything',
      'http://localhost:9090/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.3:8080/',
      'http://[fd00::3]/',
    ];
    for (const url of inside) {
      const answer = (await save(url)).json();
      expect(answer.success, url).toBe(false);
      expect(answer.message).toMatch(/^webhook_url must not point to (this server|a private, loopback)/);
    }
    expect((await save('gopher://hooks.example.com/')).json()).toMatchObject({
      success: false,
      message: 'webhook_url must be an http(s) address',
    });
    // Nothing was stored by the refusals.
    expect(JSON.parse((await client.get('/api/user/self')).json().data.setting).webhook_url).toBeUndefined();
    await root.put('/api/option/', { key: 'fetch_setting.allowed_ranges', value: '10.0.0.0/8' });
    try {
      expect((await save('http://10.0.0.3:8080/')).json().success).toBe(true);
      expect((await save('http://127.0.0.1:8080/')).json().success).toBe(false);
    } finally {
      await root.put('/api/option/', { key: 'fetch_setting.allowed_ranges', value: '' });
    }
  });

  it('lets only root read and change the outbound address settings, refusing a bad range', async () => {
    const refused = await root.put('/api/option/', {
      key: 'fetch_setting.allowed_ranges',
      value: '10.0.0.0/33',
    });
    expect(refused.json()).toMatchObject({ success: false });
    expect(refused.json().message).toContain('"10.0.0.0/33" is not one');
    const keysListedTo = async (client: ConsoleClient) =>
      ((await client.get('/api/option/')).json().data as { key: string }[]).map((o) => o.key);
    expect(await keysListedTo(root)).toContain('fetch_setting.allowed_ranges');

    const created = await root.post('/api/user/', { username: 'ops', password: 'ops-pass-123' });
    await root.post('/api/user/manage', { id: created.json().data.id, action: 'promote' });
    const admin = new ConsoleClient(t.app);
    expect((await admin.login('ops', 'ops-pass-123')).json().success).toBe(true);
    const adminKeys = await keysListedTo(admin);
    expect(adminKeys).toContain('RetryTimes');
    expect(adminKeys).not.toContain('fetch_setting.allowed_ranges');
    expect(adminKeys).not.toContain('fetch_setting.enable_ssrf_protection');
    const write = await admin.put('/api/option/', {
      key: 'fetch_setting.allowed_ranges',
      value: '0.0.0.0/0',
    });
    expect(write.json().success).toBe(false);
  });
});
