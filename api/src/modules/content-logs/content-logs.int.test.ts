import { auditLogs, contentLogs, contentLogTokens } from '@turnpike/core/db/schema/index';
import type { GatewayEvent } from '@turnpike/core/events/bus';
import { desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleClient,
  createTestApp,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

describe('content logs in the console', () => {
  let t: TestApp;
  let root: ConsoleClient;
  let owner: ConsoleClient;
  let stranger: ConsoleClient;
  let tokenId: number;

  const db = () => t.runtime.deps.db;

  beforeAll(async () => {
    t = await createTestApp({ env: { GLOBAL_API_RATE_LIMIT: '100000', CRITICAL_RATE_LIMIT: '1000' } });
    root = await setupRoot(t.app);
    owner = await registerUser(t.app, 'owner1');
    stranger = await registerUser(t.app, 'stranger1');
    tokenId = (await owner.post('/api/token/', { name: 'mine', unlimited_quota: true })).json().data.id;
    await db()
      .insert(contentLogs)
      .values({
        requestId: 'req-owner-1',
        userId: owner.userId ?? 0,
        tokenId,
        createdAt: 1_800_000_000,
        modelName: 'gpt-4o-mini',
        prompt: '{"messages":[{"role":"user","content":"hello [redacted:email]"}]}',
        answer: 'hi there',
        truncated: false,
        redactions: 1,
      });
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows a call’s content to its owner and to administrators, and to nobody else', async () => {
    const expected = {
      request_id: 'req-owner-1',
      model_name: 'gpt-4o-mini',
      answer: 'hi there',
      truncated: false,
      redactions: 1,
    };
    expect((await owner.get('/api/log/content/req-owner-1')).json()).toMatchObject({
      success: true,
      data: expected,
    });
    expect((await root.get('/api/log/content/req-owner-1')).json()).toMatchObject({
      success: true,
      data: expected,
    });
    const refused = await stranger.get('/api/log/content/req-owner-1');
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain('hi there');
    expect((await owner.get('/api/log/content/no-such-request')).statusCode).toBe(404);
  });

  it('lets the owner switch a token of theirs, tells every relay, and refuses anyone else’s', async () => {
    const events: GatewayEvent[] = [];
    const stop = t.runtime.deps.bus.subscribe((event) => {
      events.push(event);
    });
    try {
      expect((await owner.get(`/api/token/${tokenId}/content_log`)).json().data).toEqual({
        token_id: tokenId,
        enabled: false,
      });
      const on = await owner.put(`/api/token/${tokenId}/content_log`, { enabled: true });
      expect(on.json()).toMatchObject({ success: true, data: { enabled: true } });
      expect(
        await db().select().from(contentLogTokens).where(eq(contentLogTokens.tokenId, tokenId)),
      ).toHaveLength(1);
      expect(events).toContainEqual({ type: 'tokens.changed', ids: [tokenId] });

      const theirs = await stranger.put(`/api/token/${tokenId}/content_log`, { enabled: false });
      expect(theirs.statusCode).toBe(404);
      expect(
        await db().select().from(contentLogTokens).where(eq(contentLogTokens.tokenId, tokenId)),
      ).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('lets an administrator switch any token, audited', async () => {
    const off = await root.put(`/api/content_log/token/${tokenId}`, { enabled: false });
    expect(off.json()).toMatchObject({ success: true, data: { enabled: false } });
    expect(await db().select().from(contentLogTokens).where(eq(contentLogTokens.tokenId, tokenId))).toEqual(
      [],
    );
    const [row] = await db().select().from(auditLogs).orderBy(desc(auditLogs.id)).limit(1);
    expect(row).toMatchObject({
      kind: 'token',
      action: 'content log',
      targetIds: String(tokenId),
      outcome: 'ok',
    });
    expect(JSON.parse(row?.before ?? '')).toEqual({ content_log: true });
    expect(JSON.parse(row?.after ?? '')).toEqual({ content_log: false });
    expect((await owner.put(`/api/content_log/token/${tokenId}`, { enabled: true })).statusCode).toBe(403);
  });

  it('refuses a redaction pattern that does not compile or may take exponential time, at save', async () => {
    const bad = await root.put('/api/option/', {
      key: 'ContentLogRedactPatterns',
      value: 'EMP-\\d{6}\n(a+)+$',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/exponential time.*"\(a\+\)\+\$" is not one/);
    const broken = await root.put('/api/option/', { key: 'ContentLogRedactPatterns', value: '([a-z]' });
    expect(broken.statusCode).toBe(400);
    expect(t.runtime.deps.options.get('ContentLogRedactPatterns')).toEqual([]);
    const good = await root.put('/api/option/', { key: 'ContentLogRedactPatterns', value: 'EMP-\\d{6}' });
    expect(good.json().success).toBe(true);
  });

  it('lets administrators turn content logs on for a group, and keeps the audit retention root’s', async () => {
    const admin = await registerUser(t.app, 'cladmin');
    await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
    await admin.login('cladmin', 'user-password-1');
    expect((await admin.put('/api/option/', { key: 'ContentLogGroups', value: 'vip' })).json().success).toBe(
      true,
    );
    expect(t.runtime.deps.options.get('ContentLogGroups')).toEqual(['vip']);
    expect((await admin.put('/api/option/', { key: 'AuditRetentionDays', value: '1' })).statusCode).toBe(403);
    expect(
      (await stranger.put('/api/option/', { key: 'ContentLogGroups', value: 'default' })).statusCode,
    ).toBe(403);
  });
});
