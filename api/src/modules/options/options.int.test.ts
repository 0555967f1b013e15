import { DEFAULT_MODEL_RATIO } from '@turnpike/core/billing/default-ratios';
import { createManagedOptionWriter } from '@turnpike/core/options/managed-options';
import { optionAudience } from '@turnpike/core/options/registry';
import { waitFor } from '@turnpike/core/testing/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

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

  it("resets the console's model ratios and keeps the entries a ModelPrice owns laid over them", async () => {
    const { db, bus } = t.runtime.deps;
    const managed = createManagedOptionWriter({ db, bus });
    const source = { kind: 'ModelPrice', namespace: 'team-a', name: 'owned', generation: 1 } as const;
    const applied = await managed.apply({
      source,
      values: [
        { key: 'ModelRatio', entry: 'gpt-4o', number: 9 },
        { key: 'ModelRatio', entry: 'owned-model', number: 7 },
      ],
    });
    expect(applied.ok).toBe(true);
    const served = () => t.runtime.deps.options.get('ModelRatio');
    await waitFor(() => (served()['owned-model'] === 7 ? true : undefined));
    // The console changes models of its own (a save keeps the owned entries as they are served), then resets.
    const edited = { ...served(), 'my-model': 3, 'gpt-4o-mini': 0.1 };
    expect(
      (await root.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify(edited) })).json().success,
    ).toBe(true);
    expect(served()).toMatchObject({ 'my-model': 3, 'gpt-4o-mini': 0.1, 'owned-model': 7 });

    const reset = await root.post('/api/option/rest_model_ratio');
    expect(reset.json()).toMatchObject({
      success: true,
      message: expect.stringMatching(/2 managed by Kubernetes kept/),
    });
    expect(served()).toEqual({ ...DEFAULT_MODEL_RATIO, 'gpt-4o': 9, 'owned-model': 7 });
    const listed = (await root.get('/api/option/')).json().data as { key: string; value: string }[];
    expect(JSON.parse(listed.find((o) => o.key === 'ModelRatio')!.value)).toEqual(served());
    // The owned entries are still Git's after the reset.
    expect(
      (
        await root.put('/api/option/', {
          key: 'ModelRatio',
          value: JSON.stringify({ ...served(), 'owned-model': 1 }),
        })
      ).statusCode,
    ).toBe(409);

    // The resource goes: the built-in table is served again, with nothing of the console's old map.
    expect((await managed.apply({ source, values: undefined })).ok).toBe(true);
    await waitFor(() => (served()['owned-model'] === undefined ? true : undefined));
    expect(served()).toEqual(DEFAULT_MODEL_RATIO);
  });

  describe('as an administrator (role 10)', () => {
    let admin: ConsoleClient;
    beforeAll(async () => {
      admin = await registerUser(t.app, 'operator1');
      const promoted = await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
      if (!promoted.json().success) throw new Error(`promote failed: ${promoted.body}`);
      // A role change ends the user's sessions: the new administrator signs in again.
      if (!(await admin.login('operator1', 'user-password-1')).json().success)
        throw new Error('sign-in failed');
    });

    it('lists only the operation settings an administrator may change', async () => {
      await root.put('/api/option/', { key: 'SMTPServer', value: 'smtp.internal.test' });
      const list = await admin.get('/api/option/');
      expect(list.statusCode).toBe(200);
      const keys = (list.json().data as { key: string }[]).map((i) => i.key);
      expect(keys).toEqual(
        expect.arrayContaining(['RetryTimes', 'ModelRatio', 'GroupRatio', 'SensitiveWords', 'Chats']),
      );
      for (const hidden of ['SMTPServer', 'SystemName', 'ServerAddress', 'QuotaPerUnit', 'GitHubClientId'])
        expect(keys).not.toContain(hidden);
      expect(keys.every((k) => optionAudience(k) === 'admin')).toBe(true);
      expect(list.body).not.toContain('smtp.internal.test');
      // Root still sees the system settings.
      const rootKeys = ((await root.get('/api/option/')).json().data as { key: string }[]).map((i) => i.key);
      expect(rootKeys).toEqual(expect.arrayContaining(['SMTPServer', 'SystemName', 'QuotaPerUnit']));
    });

    it('saves an operation setting and restores the model ratios', async () => {
      const saved = await admin.put('/api/option/', { key: 'RetryTimes', value: 2 });
      expect(saved.json()).toMatchObject({ success: true });
      expect(t.runtime.deps.options.get('RetryTimes')).toBe(2);
      expect((await admin.put('/api/option/', { key: 'ModelRatio', value: '{"m":2}' })).json().success).toBe(
        true,
      );
      expect((await admin.post('/api/option/rest_model_ratio')).json().success).toBe(true);
      expect(t.runtime.deps.options.get('ModelRatio')).toEqual(DEFAULT_MODEL_RATIO);
    });

    it.each([
      ['SystemName', 'Taken over', /SystemName is a system setting; only the root user may change it/],
      ['QuotaPerUnit', '1', /QuotaPerUnit is a system setting/],
      ['SMTPToken', 'stolen', /SMTPToken is a secret; only the root user may change it/],
      ['oidc.client_secret', 'stolen', /oidc.client_secret is a secret/],
    ])('refuses %s with a clear message and keeps the value', async (key, value, message) => {
      const before = t.runtime.deps.options.getText(key as 'SystemName');
      const refused = await admin.put('/api/option/', { key, value });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ success: false, code: 'FORBIDDEN' });
      expect(refused.json().message).toMatch(message);
      expect(t.runtime.deps.options.getText(key as 'SystemName')).toBe(before);
    });

    it('is told a mistyped key is unknown, not forbidden', async () => {
      const refused = await admin.put('/api/option/', { key: 'retrytimes', value: '1' });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toMatch(/did you mean RetryTimes/);
    });

    it('reads only the Kubernetes owners of options it may see', async () => {
      const owners = await admin.get('/api/option/owners');
      expect(owners.statusCode).toBe(200);
      expect(Array.isArray(owners.json().data)).toBe(true);
    });
  });
});
