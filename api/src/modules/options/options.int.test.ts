import { DEFAULT_MODEL_RATIO } from '@turnpike/core/billing/default-ratios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

describe('options API', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists every option as key/value text and hides secrets', async () => {
    await root.put('/api/option/', { key: 'SMTPToken', value: 'smtp-password-value' });
    await root.put('/api/option/', { key: 'oidc.client_secret', value: 'oidc-secret-value' });
    const list = await root.get('/api/option/');
    expect(list.statusCode).toBe(200);
    const items = list.json().data as { key: string; value: string }[];
    const keys = items.map((i) => i.key);
    expect(keys).toEqual(
      expect.arrayContaining(['QuotaPerUnit', 'RetryTimes', 'SystemName', 'ModelRatio', 'GroupRatio']),
    );
    expect(keys.some((k) => /(token|secret|key)$/i.test(k.split('.').pop() ?? ''))).toBe(false);
    expect(list.body).not.toContain('smtp-password-value');
    expect(list.body).not.toContain('oidc-secret-value');
    expect(items.every((i) => typeof i.value === 'string')).toBe(true);
  });

  it('saves a valid value and accepts JSON booleans and numbers as text', async () => {
    expect((await root.put('/api/option/', { key: 'RetryTimes', value: 3 })).json().success).toBe(true);
    expect((await root.put('/api/option/', { key: 'DrawingEnabled', value: false })).json().success).toBe(
      true,
    );
    const items = (await root.get('/api/option/')).json().data as { key: string; value: string }[];
    expect(items.find((i) => i.key === 'RetryTimes')?.value).toBe('3');
    expect(items.find((i) => i.key === 'DrawingEnabled')?.value).toBe('false');
  });

  it.each([
    ['RetryTimes', 'many'],
    ['GroupRatio', '{not json'],
    ['GroupRatio', '{"default":-1}'],
    ['NoSuchOption', 'x'],
  ])('rejects %s=%s with a message and keeps the old value', async (key, value) => {
    const before = (await root.get('/api/option/')).json().data;
    const response = await root.put('/api/option/', { key, value });
    expect(response.statusCode).toBe(400);
    expect(response.json().success).toBe(false);
    expect(response.json().message.length).toBeGreaterThan(5);
    expect((await root.get('/api/option/')).json().data).toEqual(before);
  });

  it('restores the built-in model ratios', async () => {
    await root.put('/api/option/', { key: 'ModelRatio', value: '{"only-model":3}' });
    expect((await root.post('/api/option/rest_model_ratio')).json().success).toBe(true);
    expect(t.runtime.deps.options.get('ModelRatio')).toEqual(DEFAULT_MODEL_RATIO);
  });
});
