import { checkins, logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';
import { createCheckinService } from './checkin.service.ts';

describe('daily check-ins', () => {
  let t: TestApp;
  let root: ConsoleClient;

  const db = () => t.runtime.deps.db;
  const balanceOf = async (id: number | undefined) =>
    (
      await db()
        .select({ quota: users.quota })
        .from(users)
        .where(eq(users.id, id ?? 0))
    )[0]?.quota;
  const userRow = async (id: number | undefined) =>
    (
      await db()
        .select()
        .from(users)
        .where(eq(users.id, id ?? 0))
    )[0]!;

  beforeAll(async () => {
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT: '100000', CRITICAL_RATE_LIMIT: '1000' } });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('is off until an administrator turns it on', async () => {
    const user = await registerUser(t.app, 'offcheck');
    const refused = await user.post('/api/user/checkin');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, code: 'FEATURE_DISABLED' });
    expect((await user.get('/api/user/checkin')).json().success).toBe(false);
    expect(await balanceOf(user.userId)).toBe(0);
  });

  it('credits exactly once a day under 20 simultaneous check-ins, within the range, with one system log', async () => {
    await saveOption(root, 'checkin_setting.enabled', 'true');
    await saveOption(root, 'checkin_setting.min_quota', '1000');
    await saveOption(root, 'checkin_setting.max_quota', '5000');
    const user = await registerUser(t.app, 'racer');
    const answers = await Promise.all(Array.from({ length: 20 }, () => user.post('/api/user/checkin')));
    const won = answers.filter((a) => a.json().success === true);
    expect(won).toHaveLength(1);
    for (const lost of answers.filter((a) => a.json().success !== true)) {
      expect(lost.statusCode).toBe(409);
      expect(lost.json().message).toMatch(/already checked in today/);
    }
    const awarded = won[0]?.json().data.quota_awarded as number;
    expect(awarded).toBeGreaterThanOrEqual(1000);
    expect(awarded).toBeLessThanOrEqual(5000);
    expect(await balanceOf(user.userId)).toBe(awarded);
    const rows = await db()
      .select()
      .from(checkins)
      .where(eq(checkins.userId, user.userId ?? 0));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.quotaAwarded).toBe(awarded);
    const systemLogs = await db()
      .select()
      .from(logs)
      .where(and(eq(logs.userId, user.userId ?? 0), eq(logs.type, LogType.System)));
    expect(systemLogs).toHaveLength(1);
    expect(systemLogs[0]?.content).toContain(`(${awarded} quota)`);

    const status = (await user.get('/api/user/checkin')).json().data;
    expect(status).toMatchObject({
      enabled: true,
      min_quota: 1000,
      max_quota: 5000,
      stats: {
        total_quota: awarded,
        total_checkins: 1,
        checkin_count: 1,
        checked_in_today: true,
        records: [{ checkin_date: won[0]?.json().data.checkin_date, quota_awarded: awarded }],
      },
    });
  });

  it('awards the range ends, and reads an inverted range the other way round', async () => {
    const user = await registerUser(t.app, 'edges');
    const row = await userRow(user.userId);
    const days = ['2030-01-01T12:00:00Z', '2030-01-02T12:00:00Z', '2030-01-03T12:00:00Z'];
    let day = 0;
    const draws = [0, 0.999_999, 0];
    const service = createCheckinService(t.runtime.deps, {
      now: () => new Date(days[day] ?? ''),
      random: () => draws[day] ?? 0,
    });
    expect((await service.checkin(row)).quota_awarded).toBe(1000);
    day = 1;
    expect((await service.checkin(row)).quota_awarded).toBe(5000);
    await saveOption(root, 'checkin_setting.min_quota', '7000');
    day = 2;
    // min 7000 above max 5000: the range is 5000..7000.
    expect((await service.checkin(row)).quota_awarded).toBe(5000);
    await saveOption(root, 'checkin_setting.min_quota', '1000');
    expect(await balanceOf(user.userId)).toBe(11_000);
  });

  it('allows the next day in QuotaWindowTimeZone, never twice in one day', async () => {
    await saveOption(root, 'QuotaWindowTimeZone', 'Asia/Shanghai');
    const user = await registerUser(t.app, 'zoned');
    const row = await userRow(user.userId);
    let at = '2030-03-01T01:00:00Z'; // 09:00 on 1 March in Shanghai
    const service = createCheckinService(t.runtime.deps, { now: () => new Date(at), random: () => 0 });
    expect(await service.checkin(row)).toEqual({ quota_awarded: 1000, checkin_date: '2030-03-01' });
    at = '2030-03-01T15:59:59Z'; // 23:59:59 the same day there
    await expect(service.checkin(row)).rejects.toThrow(/already checked in today/);
    at = '2030-03-01T16:00:00Z'; // midnight: 2 March there, still 1 March in UTC
    expect(await service.checkin(row)).toEqual({ quota_awarded: 1000, checkin_date: '2030-03-02' });
    expect(await balanceOf(user.userId)).toBe(2000);

    const march = await service.status(row, '2030-03');
    expect(march.stats.records.map((r) => r.checkin_date)).toEqual(['2030-03-02', '2030-03-01']);
    expect(march.stats).toMatchObject({ total_checkins: 2, total_quota: 2000, checkin_count: 2 });
    expect((await service.status(row, '2030-02')).stats.checkin_count).toBe(0);
    expect((await user.get('/api/user/checkin?month=2030-13')).statusCode).toBe(400);
    await saveOption(root, 'QuotaWindowTimeZone', 'UTC');
  });
});
