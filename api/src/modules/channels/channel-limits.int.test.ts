/**
 * A channel's limits through `/api/channel` (docs/adr/0028): stored and shown, and refused with a clear message
 * when they cannot work, changing nothing.
 */
import { channels } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleClient, createTestApp, setupRoot, type TestApp } from '../../testing/test-app.ts';

describe('channel limits', () => {
  let t: TestApp;
  let root: ConsoleClient;
  beforeAll(async () => {
    t = await createTestApp();
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores rpm, tpm and concurrency limits and refuses negative, fractional or too large ones', async () => {
    const created = await root.post('/api/channel/', {
      name: 'limited',
      type: 1,
      key: 'sk-limited-0001',
      base_url: 'https://api.openai.com',
      models: 'gpt-4o',
      tpm_limit: 400000,
      concurrency_limit: 8,
    });
    expect(created.json().success).toBe(true);
    const list = (await root.get('/api/channel/?p=1&page_size=10')).json().data.items as { id: number }[];
    const id = list[0]!.id;
    expect((await root.get(`/api/channel/${id}`)).json().data).toMatchObject({
      rpm_limit: 0,
      tpm_limit: 400000,
      concurrency_limit: 8,
    });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rpm_limit: -1 }, /rpm_limit must be at least 0/],
      [{ tpm_limit: 2.5 }, /tpm_limit must be an integer/],
      [{ concurrency_limit: 2 ** 31 }, /concurrency_limit is too large/],
    ];
    for (const [fields, message] of cases) {
      const refused = await root.put('/api/channel/', { id, ...fields });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toMatch(message);
    }
    const edited = await root.put('/api/channel/', { id, rpm_limit: 120, concurrency_limit: 0 });
    expect(edited.json().success).toBe(true);
    const [row] = await t.runtime.deps.db.select().from(channels).where(eq(channels.id, id));
    expect(row).toMatchObject({ rpmLimit: 120, tpmLimit: 400000, concurrencyLimit: 0 });
  });
});
