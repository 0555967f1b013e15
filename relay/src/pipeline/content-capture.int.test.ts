import { contentLogs, contentLogTokens, logs } from '@turnpike/core/db/schema/index';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../testing/fake-openai.ts';
import { createRelayTestApp, type RelayTestApp } from '../testing/relay-test-app.ts';
import { sleep, waitFor } from '../testing/wait.ts';
import { ContentCapture } from './content-capture.ts';

/**
 * Secrets a prompt may carry. The card numbers are the test numbers card networks publish for integration
 * testing (Stripe's https://docs.stripe.com/testing#cards: Visa 4242 4242 4242 4242, Mastercard 5555 5555 5555 4444);
 * both pass the Luhn check. 4242 4242 4242 4241 differs in the check digit and does not.
 */
const PROMPT_SECRETS = {
  key: 'sk-proj-AbCdEf0123456789GhIjKl',
  email: 'jane.doe+billing@example.co.uk',
  visa: '4242 4242 4242 4242',
  mastercard: '5555-5555-5555-4444',
  notACard: '4242 4242 4242 4241',
  employeeId: 'EMP-884213',
};

let t: RelayTestApp;
let fake: FakeOpenAi;

const db = () => t.runtime.deps.db;
const rows = () => db().select().from(contentLogs);
const chat = (key: string, body: Record<string, unknown>) =>
  t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer sk-${key}` },
    payload: body,
  });
const ask = (content: string, stream = false) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...(stream ? { stream: true } : {}),
});
const requestIdOf = (response: { headers: Record<string, unknown> }) =>
  String(response.headers['x-request-id']);
const contentOf = (requestId: string) =>
  waitFor(async () => (await db().select().from(contentLogs).where(eq(contentLogs.requestId, requestId)))[0]);

async function caller(group = 'default') {
  const user = await t.seedUser({ group });
  const token = await t.seedToken(user.id);
  return { user, token };
}

/** Turns a token's content logs on as the console does: the row, then the event every relay follows. */
async function switchToken(tokenId: number, on: boolean) {
  if (on) await db().insert(contentLogTokens).values({ tokenId, enabledBy: 1, enabledAt: 0 });
  else await db().delete(contentLogTokens).where(eq(contentLogTokens.tokenId, tokenId));
  await t.runtime.deps.bus.publish({ type: 'tokens.changed', ids: [tokenId] });
}

beforeAll(async () => {
  fake = await startFakeOpenAi({
    apiKey: 'sk-upstream',
    reply: 'Sure. Write to ops@turnpike.example any time.',
  });
  t = await createRelayTestApp();
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'gpt-4o-mini': 1.5 }));
  await t.runtime.deps.options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1, audited: 1 }));
  await t.seedChannel({
    key: 'sk-upstream',
    baseUrl: fake.url,
    models: 'gpt-4o-mini',
    group: 'default,vip,audited',
  });
  await t.startRelay();
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('content logs', () => {
  it('are off by default: no row, and no capture is ever started', async () => {
    const start = vi.spyOn(ContentCapture, 'start');
    const piece = vi.spyOn(ContentCapture.prototype, 'piece');
    const answer = vi.spyOn(ContentCapture.prototype, 'answer');
    const finish = vi.spyOn(ContentCapture.prototype, 'finish');
    const { token } = await caller();
    const plain = await chat(token.key, ask('hello'));
    const streamed = await chat(token.key, ask('hello', true));
    expect(plain.statusCode).toBe(200);
    expect(streamed.statusCode).toBe(200);
    // Both calls were billed and logged: the writers ran, and wrote no content.
    await waitFor(
      async () =>
        (await db().select().from(logs).where(eq(logs.tokenId, token.id))).length === 2 || undefined,
    );
    await sleep(100);
    expect(await rows()).toEqual([]);
    expect(start).not.toHaveBeenCalled();
    expect(piece).not.toHaveBeenCalled();
    expect(answer).not.toHaveBeenCalled();
    expect(finish).not.toHaveBeenCalled();
  });

  it('keep a group’s calls, redacted before the database sees them, linked to the consume log', async () => {
    await t.runtime.deps.options.set('ContentLogGroups', 'audited');
    await t.runtime.deps.options.set('ContentLogRedactPatterns', 'EMP-\\d{6}');
    const { token } = await caller('audited');
    const prompt = `my key ${PROMPT_SECRETS.key}, mail ${PROMPT_SECRETS.email}, cards ${PROMPT_SECRETS.visa} and ${PROMPT_SECRETS.mastercard}, order ${PROMPT_SECRETS.notACard}, badge ${PROMPT_SECRETS.employeeId}`;
    const response = await chat(token.key, ask(prompt));
    expect(response.statusCode).toBe(200);
    const requestId = requestIdOf(response);
    const row = await contentOf(requestId);
    const stored = JSON.stringify(row);
    for (const secret of [
      PROMPT_SECRETS.key,
      PROMPT_SECRETS.email,
      PROMPT_SECRETS.visa,
      PROMPT_SECRETS.mastercard,
      PROMPT_SECRETS.employeeId,
      'ops@turnpike.example',
    ])
      expect(stored).not.toContain(secret);
    expect(row?.prompt).toContain('[redacted:key]');
    expect(row?.prompt).toContain('[redacted:email]');
    expect(row?.prompt.match(/\[redacted:card\]/g)).toHaveLength(2);
    expect(row?.prompt).toContain('[redacted]');
    // A number that fails the Luhn check is no card: kept.
    expect(row?.prompt).toContain(PROMPT_SECRETS.notACard);
    expect(row?.answer).toContain('Write to [redacted:email] any time.');
    expect(row).toMatchObject({
      tokenId: token.id,
      modelName: 'gpt-4o-mini',
      truncated: false,
      redactions: 6,
    });
    // The consume log comes by the money's own writer, maybe later: the same request id finds it.
    const consume = await waitFor(
      async () => (await db().select().from(logs).where(eq(logs.requestId, requestId)))[0],
    );
    expect(consume.tokenId).toBe(token.id);
    // Another group's calls keep nothing.
    const other = await caller('vip');
    const elsewhere = await chat(other.token.key, ask('hello'));
    await sleep(100);
    expect(
      await db()
        .select()
        .from(contentLogs)
        .where(eq(contentLogs.requestId, requestIdOf(elsewhere))),
    ).toEqual([]);
    await t.runtime.deps.options.set('ContentLogGroups', '');
  });

  it('keep one token’s calls when switched on for it, streams included, and stop when switched off', async () => {
    const { token } = await caller();
    const neighbour = await caller();
    await switchToken(token.id, true);
    const streamed = await chat(token.key, ask('stream it', true));
    expect(streamed.statusCode).toBe(200);
    const row = await contentOf(requestIdOf(streamed));
    expect(row?.answer).toBe('Sure. Write to [redacted:email] any time.');
    expect(JSON.parse(row?.prompt ?? '')).toMatchObject({
      messages: [{ role: 'user', content: 'stream it' }],
    });
    const beside = await chat(neighbour.token.key, ask('not me'));
    await switchToken(token.id, false);
    const after = await chat(token.key, ask('off again'));
    await sleep(100);
    for (const quiet of [beside, after])
      expect(
        await db()
          .select()
          .from(contentLogs)
          .where(eq(contentLogs.requestId, requestIdOf(quiet))),
      ).toEqual([]);
  });

  it('cut a call at ContentLogMaxBytes, prompt and answer together, and say so', async () => {
    await t.runtime.deps.options.set('ContentLogMaxBytes', '1024');
    const { token } = await caller();
    await switchToken(token.id, true);
    fake.setBehaviour({ reply: 'word '.repeat(600).trim() });
    const long = 'é'.repeat(3_000);
    const response = await chat(token.key, ask(long, true));
    expect(response.statusCode).toBe(200);
    const row = await contentOf(requestIdOf(response));
    expect(row?.truncated).toBe(true);
    expect(Buffer.byteLength(row?.prompt ?? '') + Buffer.byteLength(row?.answer ?? '')).toBeLessThanOrEqual(
      1024,
    );
    // Both longer than half: half each, never a character split.
    expect(Buffer.byteLength(row?.prompt ?? '')).toBeGreaterThan(500);
    expect(row?.answer.startsWith('word word')).toBe(true);
    expect(row?.prompt).not.toContain('\uFFFD');
    fake.setBehaviour({ reply: 'Sure. Write to ops@turnpike.example any time.' });
    await t.runtime.deps.options.set('ContentLogMaxBytes', '32768');
  });
});
