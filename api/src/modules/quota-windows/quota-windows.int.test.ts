/**
 * Quota windows through `/api` (issue 39): set on tokens by their owner and on users by an administrator, for
 * groups through the `GroupQuotaWindows` option, and read back with what each has spent.
 *
 * The clock is fixed at Tuesday 2026-03-10 15:30:00 UTC, which is 23:30 in Asia/Shanghai (UTC+8, no daylight
 * saving), the zone the windows are configured in. The instants below were worked out from the calendar by hand
 * (and checked with `date -u -d <instant> +%s`), not with the code under test:
 * - the local day started 2026-03-10 00:00 +08 = 2026-03-09T16:00Z and resets 2026-03-11 00:00 +08 = 16:00Z today;
 * - the local week started Monday 2026-03-09 00:00 +08 = 2026-03-08T16:00Z and resets Monday 2026-03-16 00:00 +08;
 * - the local month started 2026-03-01 00:00 +08 = 2026-02-28T16:00Z and resets 2026-04-01 00:00 +08.
 * Spending is inserted into `quota_window_usage` as the relay's writer leaves it: one row per window key
 * (`t:<token>|quota:day`, `u:<user>|requests:day`, `g:<group>:<user>|quota:week`) and slot start.
 */
import { quotaWindowUsage, tokens, users } from '@turnpike/core/db/schema/index';
import type { GatewayEvent } from '@turnpike/core/events/bus';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  saveOption,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/** 2026-03-10T15:30:00Z */
const NOW = 1_773_156_600;
/** 2026-03-09T16:00:00Z: 2026-03-10 00:00 in Shanghai, the day the clock is in. */
const DAY_START = 1_773_072_000;
/** 2026-03-10T16:00:00Z: 2026-03-11 00:00 in Shanghai. */
const DAY_RESET = 1_773_158_400;
/** 2026-03-08T16:00:00Z: Monday 2026-03-09 00:00 in Shanghai; also the day before DAY_START. */
const WEEK_START = 1_772_985_600;
/** 2026-03-15T16:00:00Z: Monday 2026-03-16 00:00 in Shanghai. */
const WEEK_RESET = 1_773_590_400;
/** 2026-02-28T16:00:00Z: 2026-03-01 00:00 in Shanghai. */
const MONTH_START = 1_772_294_400;
/** 2026-03-31T16:00:00Z: 2026-04-01 00:00 in Shanghai. */
const MONTH_RESET = 1_774_972_800;

describe('quota windows through /api', () => {
  let t: TestApp;
  let root: ConsoleClient;
  const events: GatewayEvent[] = [];

  beforeAll(async () => {
    t = await createTestApp({ now: () => NOW });
    root = await setupRoot(t.app);
    await saveOption(root, 'QuotaWindowTimeZone', 'Asia/Shanghai');
    t.runtime.deps.bus.subscribe((event) => events.push(event));
  });
  afterAll(async () => {
    await t.close();
  });

  const spend = (windowKey: string, slotStart: number, amount: number) =>
    t.runtime.deps.db.insert(quotaWindowUsage).values({ windowKey, slotStart, amount });
  const storedTokenWindows = async (id: number) =>
    (await t.runtime.deps.db.select().from(tokens).where(eq(tokens.id, id)))[0]?.quotaWindows;
  const storedUserWindows = async (id: number) =>
    (await t.runtime.deps.db.select().from(users).where(eq(users.id, id)))[0]?.quotaWindows;

  it("answers a token's windows with what each has spent, in the configured time zone", async () => {
    const amy = await registerUser(t.app, 'amy');
    const windows = [
      { unit: 'quota', limit: 2_500_000, period: 'day' }, // $5 a day at 500,000 quota per dollar
      { unit: 'quota', limit: 50_000_000, period: 'month' }, // $100 a month
      { unit: 'requests', limit: 200, period: 'day' },
      { unit: 'quota', limit: 10_000_000, period: 'rolling', hours: 5 },
    ];
    const created = await amy.post('/api/token/', { name: 'agent', quota_windows: windows });
    expect(created.json().success).toBe(true);
    const id: number = created.json().data.id;
    expect(created.json().data.quota_windows).toEqual(windows);
    expect(await storedTokenWindows(id)).toEqual(windows);
    // Nothing spent yet: all left. A rolling window that spent nothing names the end of its current
    // 5-minute bucket (5 hours / 60 buckets), 2026-03-10T15:35:00Z.
    expect(created.json().data.quota_window_states).toEqual([
      { unit: 'quota', period: 'day', limit: 2_500_000, used: 0, left: 2_500_000, reset_at: DAY_RESET },
      { unit: 'quota', period: 'month', limit: 50_000_000, used: 0, left: 50_000_000, reset_at: MONTH_RESET },
      { unit: 'requests', period: 'day', limit: 200, used: 0, left: 200, reset_at: DAY_RESET },
      {
        unit: 'quota',
        period: 'rolling',
        hours: 5,
        limit: 10_000_000,
        used: 0,
        left: 10_000_000,
        reset_at: 1_773_156_900,
      },
    ]);

    await spend(`t:${id}|quota:day`, DAY_START, 600_000);
    await spend(`t:${id}|quota:day`, WEEK_START, 9_999_999); // yesterday (local): not today's
    await spend(`t:${id}|quota:month`, MONTH_START, 1_000_000);
    await spend(`t:${id}|requests:day`, DAY_START, 37);
    // The last 5 hours are counted in whole 5-minute buckets from 10:35:00Z on: 10:30Z is out, 11:05Z and
    // 14:30Z are in; the 11:05Z spending is the first to leave, at 16:05Z (5 hours after its bucket started).
    await spend(`t:${id}|quota:5h`, 1_773_138_600, 123); // 2026-03-10T10:30:00Z
    await spend(`t:${id}|quota:5h`, 1_773_140_700, 400_000); // 2026-03-10T11:05:00Z
    await spend(`t:${id}|quota:5h`, 1_773_153_000, 100_000); // 2026-03-10T14:30:00Z
    // Another token's spending is not this one's.
    await spend(`t:${id + 1000}|quota:day`, DAY_START, 5);

    const expected = [
      { unit: 'quota', period: 'day', limit: 2_500_000, used: 600_000, left: 1_900_000, reset_at: DAY_RESET },
      {
        unit: 'quota',
        period: 'month',
        limit: 50_000_000,
        used: 1_000_000,
        left: 49_000_000,
        reset_at: MONTH_RESET,
      },
      { unit: 'requests', period: 'day', limit: 200, used: 37, left: 163, reset_at: DAY_RESET },
      {
        unit: 'quota',
        period: 'rolling',
        hours: 5,
        limit: 10_000_000,
        used: 500_000,
        left: 9_500_000,
        reset_at: 1_773_158_700, // 2026-03-10T16:05:00Z
      },
    ];
    expect((await amy.get(`/api/token/${id}`)).json().data.quota_window_states).toEqual(expected);
    const listed = (await amy.get('/api/token/')).json().data.items;
    expect(listed.find((row: { id: number }) => row.id === id).quota_window_states).toEqual(expected);
    const found = (await amy.get('/api/token/search?keyword=agent')).json().data.items;
    expect(found[0].quota_window_states).toEqual(expected);
  });

  it('shows a window spent past its limit as nothing left, never a negative amount', async () => {
    const ben = await registerUser(t.app, 'ben');
    const created = await ben.post('/api/token/', {
      name: 'over',
      quota_windows: [{ unit: 'requests', limit: 10, period: 'week' }],
    });
    const id: number = created.json().data.id;
    await spend(`t:${id}|requests:week`, WEEK_START, 12);
    expect((await ben.get(`/api/token/${id}`)).json().data.quota_window_states).toEqual([
      { unit: 'requests', period: 'week', limit: 10, used: 12, left: 0, reset_at: WEEK_RESET },
    ]);
  });

  it('refuses bad windows on a new token with a message naming the window, and stores nothing', async () => {
    const cat = await registerUser(t.app, 'cat');
    const day = { unit: 'quota', limit: 500_000, period: 'day' };
    const cases: [unknown, string][] = [
      [[{ ...day, limit: 0 }], 'quota_windows, window 1: limit must be more than 0'],
      [
        [day, { ...day, limit: 1.5, period: 'week' }],
        'quota_windows, window 2: limit must be a whole number',
      ],
      [[{ ...day, unit: 'dollars' }], 'quota_windows, window 1: unit must be "quota" or "requests"'],
      [
        [{ ...day, period: 'hourly' }],
        'quota_windows, window 1: period must be "day", "week", "month" or "rolling"',
      ],
      [
        [{ ...day, period: 'rolling' }],
        'quota_windows, window 1: a rolling window needs "hours", and only a rolling window has them',
      ],
      [
        [{ ...day, hours: 5 }],
        'quota_windows, window 1: a rolling window needs "hours", and only a rolling window has them',
      ],
      [[{ ...day, period: 'rolling', hours: 745 }], 'quota_windows, window 1: hours must be 744 or fewer'],
      [[{ ...day, period: 'rolling', hours: 0 }], 'quota_windows, window 1: hours must be 1 or more'],
      [[day, { ...day, limit: 9 }], 'quota_windows: two windows have the same unit and period'],
      [
        Array.from({ length: 9 }, (_, i) => ({ ...day, period: 'rolling', hours: i + 1 })),
        'at most 8 windows',
      ],
      ['$5 a day', 'quota_windows: must be a list of windows'],
      [[{ ...day, currency: 'USD' }], 'quota_windows, window 1: Unrecognized key: "currency"'],
    ];
    for (const [quota_windows, message] of cases) {
      const refused = await cat.post('/api/token/', { name: 'x', quota_windows });
      expect(refused.statusCode, message).toBe(400);
      expect(refused.json()).toMatchObject({ success: false, message: expect.stringContaining(message) });
    }
    expect((await cat.get('/api/token/')).json().data.total).toBe(0);
  });

  it('edits windows only when sent: an old script keeps them, a bad edit changes nothing, [] removes them', async () => {
    const dan = await registerUser(t.app, 'dan');
    const windows = [{ unit: 'quota', limit: 2_500_000, period: 'day' }];
    const id: number = (await dan.post('/api/token/', { name: 'ci', quota_windows: windows })).json().data.id;

    // A client that knows nothing of windows (the reference's fields only) leaves them as they are.
    const renamed = await dan.put('/api/token/', {
      id,
      name: 'ci-2',
      remain_quota: 10,
      unlimited_quota: false,
    });
    expect(renamed.json().data).toMatchObject({ name: 'ci-2', quota_windows: windows });
    const disabled = await dan.put('/api/token/?status_only=true', { id, status: 2, quota_windows: [] });
    expect(disabled.json().data).toMatchObject({ status: 2, quota_windows: windows });

    const refused = await dan.put('/api/token/', {
      id,
      name: 'ci-3',
      quota_windows: [{ unit: 'quota', limit: -5, period: 'day' }],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe('quota_windows, window 1: limit must be more than 0');
    expect((await dan.get(`/api/token/${id}`)).json().data.name).toBe('ci-2');
    expect(await storedTokenWindows(id)).toEqual(windows);

    events.length = 0;
    const more = [...windows, { unit: 'requests', limit: 1000, period: 'rolling', hours: 24 }];
    expect((await dan.put('/api/token/', { id, quota_windows: more })).json().data.quota_windows).toEqual(
      more,
    );
    expect(await storedTokenWindows(id)).toEqual(more);
    // The relays reload the token on this event, so the new windows apply to its next call.
    expect(events).toContainEqual({ type: 'tokens.changed', ids: [id] });

    const cleared = await dan.put('/api/token/', { id, quota_windows: [] });
    expect(cleared.json().data).toMatchObject({ quota_windows: [], quota_window_states: [] });
    expect(await storedTokenWindows(id)).toEqual([]);
  });

  it("lets an administrator set a user's windows, refuses bad ones unchanged, and announces the change", async () => {
    const eve = await registerUser(t.app, 'eve');
    const uid = eve.userId as number;
    const windows = [
      { unit: 'quota', limit: 5_000_000, period: 'week' },
      { unit: 'requests', limit: 100, period: 'day' },
    ];
    events.length = 0;
    const saved = await root.put('/api/user/', { id: uid, quota_windows: windows });
    expect(saved.json()).toMatchObject({ success: true, data: { quota_windows: windows } });
    expect(await storedUserWindows(uid)).toEqual(windows);
    expect(events).toContainEqual({ type: 'users.changed', ids: [uid] });

    await spend(`u:${uid}|quota:week`, WEEK_START, 1_250_000);
    await spend(`u:${uid}|requests:day`, DAY_START, 99);
    const got = (await root.get(`/api/user/${uid}`)).json().data;
    expect(got).toMatchObject({
      quota_windows: windows,
      quota_window_states: [
        {
          unit: 'quota',
          period: 'week',
          limit: 5_000_000,
          used: 1_250_000,
          left: 3_750_000,
          reset_at: WEEK_RESET,
        },
        { unit: 'requests', period: 'day', limit: 100, used: 99, left: 1, reset_at: DAY_RESET },
      ],
      group_quota_windows: [],
      group_quota_window_states: [],
    });

    const refused = await root.put('/api/user/', {
      id: uid,
      display_name: 'Eve!',
      quota_windows: [{ unit: 'requests', limit: 100, period: 'fortnight' }],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe(
      'quota_windows, window 1: period must be "day", "week", "month" or "rolling"',
    );
    expect(await storedUserWindows(uid)).toEqual(windows);
    expect((await root.get(`/api/user/${uid}`)).json().data.display_name).not.toBe('Eve!');

    // An edit without windows (the reference's console) keeps them.
    await root.put('/api/user/', { id: uid, display_name: 'Eve' });
    expect(await storedUserWindows(uid)).toEqual(windows);
  });

  it('never lets a user set windows on their own account', async () => {
    const fay = await registerUser(t.app, 'fay');
    const uid = fay.userId as number;
    const windows = [{ unit: 'quota', limit: 500_000, period: 'day' }];
    await root.put('/api/user/', { id: uid, quota_windows: windows });
    expect((await fay.put('/api/user/', { id: uid, quota_windows: [] })).statusCode).toBe(403);
    // The self edit takes only its own fields; windows sent with it are dropped.
    expect((await fay.put('/api/user/self', { display_name: 'Fay', quota_windows: [] })).json().success).toBe(
      true,
    );
    expect(await storedUserWindows(uid)).toEqual(windows);
  });

  it("shows a user their own windows and their group's on /api/user/self, each with what it has spent", async () => {
    const gus = await registerUser(t.app, 'gus');
    const uid = gus.userId as number;
    await saveOption(
      root,
      'GroupQuotaWindows',
      JSON.stringify({
        vip: [
          { unit: 'quota', limit: 5_000_000, period: 'week' },
          { unit: 'requests', limit: 1000, period: 'rolling', hours: 24 },
        ],
      }),
    );
    await root.put('/api/user/', {
      id: uid,
      group: 'vip',
      quota_windows: [{ unit: 'quota', limit: 25_000_000, period: 'month' }],
    });
    await spend(`u:${uid}|quota:month`, MONTH_START, 7_500_000);
    await spend(`g:vip:${uid}|quota:week`, WEEK_START, 1_250_000);
    // Another user of the group spends from their own copy of the group's windows.
    await spend(`g:vip:${uid + 1000}|quota:week`, WEEK_START, 4_000_000);
    // 24 hours in 60 buckets of 24 minutes: 2026-03-10T14:24:00Z is a bucket start, counted until 14:24Z tomorrow.
    await spend(`g:vip:${uid}|requests:24h`, 1_773_152_640, 40);

    const self = (await gus.get('/api/user/self')).json().data;
    expect(self).toMatchObject({
      id: uid,
      group: 'vip',
      quota_windows: [{ unit: 'quota', limit: 25_000_000, period: 'month' }],
      quota_window_states: [
        {
          unit: 'quota',
          period: 'month',
          limit: 25_000_000,
          used: 7_500_000,
          left: 17_500_000,
          reset_at: MONTH_RESET,
        },
      ],
      group_quota_windows: [
        { unit: 'quota', limit: 5_000_000, period: 'week' },
        { unit: 'requests', limit: 1000, period: 'rolling', hours: 24 },
      ],
      group_quota_window_states: [
        {
          unit: 'quota',
          period: 'week',
          limit: 5_000_000,
          used: 1_250_000,
          left: 3_750_000,
          reset_at: WEEK_RESET,
        },
        {
          unit: 'requests',
          period: 'rolling',
          hours: 24,
          limit: 1000,
          used: 40,
          left: 960,
          reset_at: 1_773_239_040, // 2026-03-11T14:24:00Z
        },
      ],
    });
    // The administrator's sheet shows the same.
    const sheet = (await root.get(`/api/user/${uid}`)).json().data;
    expect(sheet.group_quota_window_states).toEqual(self.group_quota_window_states);
  });

  it('a user of a group without windows has none from it', async () => {
    const hal = await registerUser(t.app, 'hal');
    expect((await hal.get('/api/user/self')).json().data).toMatchObject({
      group: 'default',
      quota_windows: [],
      quota_window_states: [],
      group_quota_windows: [],
      group_quota_window_states: [],
    });
  });

  it('refuses group windows and a time zone the registry rejects, keeping the saved ones', async () => {
    const cases: [string, string, string][] = [
      [
        'GroupQuotaWindows',
        '{"vip":[{"unit":"quota","limit":0,"period":"day"}]}',
        'limit must be more than 0',
      ],
      ['GroupQuotaWindows', '[{"unit":"quota","limit":5,"period":"day"}]', 'GroupQuotaWindows'],
      ['QuotaWindowTimeZone', 'Mars/Olympus', 'must be a time zone name such as UTC or Asia/Shanghai'],
    ];
    for (const [key, value, message] of cases) {
      const refused = await root.put('/api/option/', { key, value });
      expect(refused.json(), `${key}=${value}`).toMatchObject({
        success: false,
        message: expect.stringContaining(message),
      });
    }
    const saved = Object.fromEntries(
      ((await root.get('/api/option/')).json().data as { key: string; value: string }[]).map((o) => [
        o.key,
        o.value,
      ]),
    );
    expect(saved.QuotaWindowTimeZone).toBe('Asia/Shanghai');
    expect(JSON.parse(saved.GroupQuotaWindows ?? '')).toHaveProperty('vip');
  });
});
