import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

describe('GET /api/status', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers every field the console reads, publicly', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(response.statusCode).toBe(200);
    const data = response.json().data;
    for (const field of [
      'system_name',
      'logo',
      'footer_html',
      'quota_per_unit',
      'display_in_currency',
      'enable_drawing',
      'enable_task',
      'enable_data_export',
      'chats',
      'data_export_default_time',
      'default_collapse_sidebar',
      'mj_notify_enabled',
      'chat_link',
      'chat_link2',
      'docs_link',
      'version',
      'start_time',
      'email_verification',
      'turnstile_check',
      'turnstile_site_key',
      'github_oauth',
      'github_client_id',
      'oidc_enabled',
      'oidc_client_id',
      'oidc_authorization_endpoint',
      'wechat_login',
      'wechat_qrcode',
      'telegram_oauth',
      'telegram_bot_name',
      'linuxdo_oauth',
      'linuxdo_client_id',
      'setup',
      'self_use_mode_enabled',
      'demo_site_enabled',
      'server_address',
      'price',
      'min_topup',
      'top_up_link',
      'enable_online_topup',
      'update_check_url',
    ]) {
      expect(data, field).toHaveProperty(field);
    }
    expect(data).toMatchObject({ quota_per_unit: 500000, setup: false, price: 7.3, min_topup: 1 });
    // No release feed configured: the console offers no update check. Usage is always written in batches.
    expect(data).toMatchObject({ update_check_url: '', enable_batch_update: true });
  });

  it('reflects a changed option and never carries a secret', async () => {
    const root = await setupRoot(t.app);
    expect(
      (await root.put('/api/option/', { key: 'SystemName', value: 'Acme Gateway' })).json().success,
    ).toBe(true);
    expect(
      (await root.put('/api/option/', { key: 'GitHubClientSecret', value: 'gh-secret-value' })).json()
        .success,
    ).toBe(true);
    const response = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(response.json().data).toMatchObject({ system_name: 'Acme Gateway', setup: true });
    expect(response.body).not.toContain('gh-secret-value');
  });
});

describe('GET /api/status with a release feed and chats set', () => {
  const FEED = 'https://releases.internal.test/turnpike/latest';
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp({ env: { UPDATE_CHECK_URL: FEED } });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('names the configured release feed for the update check', async () => {
    const data = (await t.app.inject({ method: 'GET', url: '/api/status' })).json().data;
    expect(data.update_check_url).toBe(FEED);
  });

  it('takes the chat links from the Chats option the console writes', async () => {
    const chats = [{ Alpha: 'https://alpha.example/?k={key}' }, { Beta: 'https://beta.example/#{key}' }];
    expect(
      (await root.put('/api/option/', { key: 'Chats', value: JSON.stringify(chats) })).json().success,
    ).toBe(true);
    const data = (await t.app.inject({ method: 'GET', url: '/api/status' })).json().data;
    expect(data).toMatchObject({
      chats,
      chat_link: 'https://alpha.example/?k={key}',
      chat_link2: 'https://beta.example/#{key}',
    });
    expect((await root.put('/api/option/', { key: 'Chats', value: '[]' })).json().success).toBe(true);
    const empty = (await t.app.inject({ method: 'GET', url: '/api/status' })).json().data;
    expect(empty).toMatchObject({ chat_link: '', chat_link2: '' });
  });
});

describe('GET /api/status/test and requests that name JSON without a body', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('tells an administrator the database answers, and nobody else', async () => {
    const answer = await root.get('/api/status/test');
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ success: true, message: 'the database answers' });
    expect((await t.app.inject({ method: 'GET', url: '/api/status/test' })).statusCode).toBe(401);
  });

  it('answers GET and DELETE sent with Content-Type: application/json and no body', async () => {
    const headers = {
      cookie: root.cookie,
      'new-api-user': String(root.userId),
      'content-type': 'application/json',
    };
    const list = await t.app.inject({ method: 'GET', url: '/api/token/?p=1', headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().success).toBe(true);
    const gone = await t.app.inject({ method: 'DELETE', url: '/api/token/424242', headers });
    expect(gone.json().success).toBe(false);
    expect(gone.json().message).not.toMatch(/JSON/i);
    // A POST still needs its body.
    const post = await t.app.inject({ method: 'POST', url: '/api/token/', headers });
    expect(post.statusCode).toBe(400);
  });
});
