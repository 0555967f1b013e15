import { DEFAULT_CHANNEL_AFFINITY } from '@turnpike/core/channels/affinity-rules';
import type { ChannelView } from '@turnpike/core/contracts/channels';
import { channels } from '@turnpike/core/db/schema/index';
import { readSample } from '@turnpike/relay/metrics/prometheus-text';
import { type FakePromptCache, startFakePromptCache } from '@turnpike/relay/testing/fake-prompt-cache';
import { startFakeProviders } from '@turnpike/relay/testing/fake-providers';
import { waitFor } from '@turnpike/relay/testing/wait';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from '../testing/all-test-app.ts';
import { type ConsoleClient, saveOption, setupRoot } from '../testing/test-app.ts';

let t: RelayTestApp;
let root: ConsoleClient;
let east: FakePromptCache;
let west: FakePromptCache;
let auth: Record<string, string>;

const SYSTEM = `You are a coding agent. ${'Follow the repository conventions carefully. '.repeat(80)}`;

/** What an agent sends back each turn: a file it read, a command's output. */
const toolOutput = (session: string, step: number) =>
  `${session} step ${step}, the file read:\n${`  const line${step} = compute(${step});\n`.repeat(40)}`;

/** One turn of an agent session: the whole conversation so far, as agents send it, with its cache key. */
function turnBody(session: string, turn: number) {
  const messages: { role: string; content: string }[] = [{ role: 'system', content: SYSTEM }];
  for (let i = 0; i < turn; i += 1)
    messages.push({ role: 'user', content: toolOutput(session, i) }, { role: 'assistant', content: 'Done.' });
  messages.push({ role: 'user', content: toolOutput(session, turn) });
  return { model: 'agent-model', prompt_cache_key: session, messages };
}

/** One turn of `session` through the relay, which must answer 200 (a move to another channel is never an error). */
async function turn(session: string, n: number) {
  const r = await t.relay.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: auth,
    payload: turnBody(session, n),
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().usage as { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
}

async function runSession(session: string, turns: number) {
  let prompt = 0;
  let cached = 0;
  for (let n = 0; n < turns; n += 1) {
    const usage = await turn(session, n);
    prompt += usage.prompt_tokens;
    cached += usage.prompt_tokens_details?.cached_tokens ?? 0;
  }
  return { prompt, cached, share: cached / prompt };
}

const metric = async (name: string, labels: Record<string, string>) =>
  readSample((await t.relay.inject({ method: 'GET', url: '/metrics' })).body, name, labels) ?? 0;

async function addChannel(
  name: string,
  fake: FakePromptCache,
  key: string,
  extra: Record<string, unknown> = {},
) {
  const r = await root.post('/api/channel/', {
    name,
    type: 1,
    key,
    base_url: fake.url,
    models: 'agent-model',
    ...extra,
  });
  expect(r.json()).toMatchObject({ success: true });
  return (r.json().data as ChannelView[])[0]!.id;
}

beforeAll(async () => {
  east = await startFakePromptCache({ 'sk-east': 'ok', 'sk-east-2': 'ok' });
  west = await startFakePromptCache({ 'sk-west': 'ok' });
  t = await createRelayTestApp();
  root = await setupRoot(t.app);
  await t.startRelay();
  const user = await t.seedUser({ quota: 100_000_000 });
  auth = { authorization: `Bearer sk-${(await t.seedToken(user.id)).key}` };
  await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'agent-model': 1 }));
  await t.runtime.deps.options.set('RetryTimes', '1');
});
afterAll(async () => {
  await t.close();
  await east.close();
  await west.close();
});
beforeEach(async () => {
  const ids = (await t.runtime.deps.db.select().from(channels)).map((c) => c.id);
  if (ids.length > 0) await root.post('/api/channel/batch', { ids });
  await saveOption(root, 'ChannelAffinity', JSON.stringify(DEFAULT_CHANNEL_AFFINITY));
  east.calls.clear();
  west.calls.clear();
});

describe('session affinity on one relay', () => {
  it('keeps a session on the channel of its first call, so the prompt cache stays warm (and colder without)', async () => {
    await addChannel('east', east, 'sk-east');
    await addChannel('west', west, 'sk-west');
    const misses = await metric('turnpike_relay_affinity_total', { result: 'miss' });
    const hits = await metric('turnpike_relay_affinity_total', { result: 'hit' });
    const on = await runSession('thread-on', 8);
    expect([
      east.calls.size + west.calls.size,
      (east.calls.get('sk-east') ?? 0) + (west.calls.get('sk-west') ?? 0),
    ]).toEqual([1, 8]);
    expect(on.share).toBeGreaterThan(0.8);
    expect(await metric('turnpike_relay_affinity_total', { result: 'miss' })).toBe(misses + 1);
    expect(await metric('turnpike_relay_affinity_total', { result: 'hit' })).toBe(hits + 7);
    expect(await metric('turnpike_relay_prompt_cache_read_tokens_total', {})).toBeGreaterThan(0);
    // The same session with affinity off goes to both channels in turn, and each sees half the conversation.
    await saveOption(
      root,
      'ChannelAffinity',
      JSON.stringify({ ...DEFAULT_CHANNEL_AFFINITY, enabled: false }),
    );
    east.calls.clear();
    west.calls.clear();
    const off = await runSession('thread-off', 8);
    expect(east.calls.get('sk-east')).toBeGreaterThan(0);
    expect(west.calls.get('sk-west')).toBeGreaterThan(0);
    expect(off.share).toBeLessThan(on.share - 0.05);
  });

  it('drops a binding to a channel switched off at once, and binds the session where it is served next', async () => {
    const eastId = await addChannel('east', east, 'sk-east');
    const westId = await addChannel('west', west, 'sk-west');
    await runSession('thread-move', 1);
    const boundTo = east.calls.size > 0 ? eastId : westId;
    const other = boundTo === eastId ? west : east;
    await root.put('/api/channel/', { id: boundTo, status: 2 });
    // The relay hears of the change through the event bus: the next calls are made once it has.
    const stateIs = (state: string) => async () =>
      (await metric('turnpike_relay_channel_state', { channel: String(boundTo), state })) === 1
        ? true
        : undefined;
    await waitFor(stateIs('disabled'));
    const rebinds = await metric('turnpike_relay_affinity_total', { result: 'rebind' });
    const before = [...other.calls.values()].reduce((a, b) => a + b, 0);
    for (let turn = 1; turn < 4; turn += 1) {
      const r = await t.relay.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: auth,
        payload: turnBody('thread-move', turn),
      });
      expect(r.statusCode).toBe(200);
    }
    expect([...other.calls.values()].reduce((a, b) => a + b, 0) - before).toBe(3);
    expect(await metric('turnpike_relay_affinity_total', { result: 'rebind' })).toBe(rebinds + 1);
    // The channel back on: the session stays where it was rebound.
    await root.put('/api/channel/', { id: boundTo, status: 1 });
    await waitFor(stateIs('enabled'));
    const r = await t.relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: auth,
      payload: turnBody('thread-move', 4),
    });
    expect(r.json().usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  /** Calls each fake upstream answered, by name. */
  const served = () => ({
    east: [...east.calls.values()].reduce((a, b) => a + b, 0),
    west: [...west.calls.values()].reduce((a, b) => a + b, 0),
  });

  it('moves a session off its channel while another session’s 429 rests it, without calling it or an error', async () => {
    await t.runtime.deps.options.set('ChannelCooldownEnabled', 'true');
    await t.runtime.deps.options.set('ChannelCooldownFailures', '1');
    try {
      // East comes first (a higher priority), so both sessions start there; west takes the retries.
      const eastId = await addChannel('east', east, 'sk-east', { priority: 10 });
      await addChannel('west', west, 'sk-west');
      await turn('thread-cool', 0);
      await turn('thread-other', 0);
      expect(served()).toEqual({ east: 2, west: 0 });
      // The other session's next call meets OpenAI's rate limit error on east: retried on west, east rests.
      east.setKey('sk-east', 'rate-limited');
      await turn('thread-other', 1);
      expect(served()).toEqual({ east: 3, west: 1 });
      expect(
        await metric('turnpike_relay_channel_state', { channel: String(eastId), state: 'cooling_down' }),
      ).toBe(1);
      // East would answer again, but it rests: the session bound to it goes to west without a call to east, and
      // its next turns stay there with the cache warm from the turn that moved.
      east.setKey('sk-east', 'ok');
      const rebinds = await metric('turnpike_relay_affinity_total', { result: 'rebind' });
      await turn('thread-cool', 1);
      for (let n = 2; n < 5; n += 1)
        expect((await turn('thread-cool', n)).prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
      expect(served()).toEqual({ east: 3, west: 5 });
      expect(await metric('turnpike_relay_affinity_total', { result: 'rebind' })).toBe(rebinds + 1);
    } finally {
      await t.runtime.deps.options.set('ChannelCooldownEnabled', 'false');
      await t.runtime.deps.options.set('ChannelCooldownFailures', '3');
    }
  });

  it('drops the binding of a channel deleted in the console: the next call goes elsewhere without an error', async () => {
    const eastId = await addChannel('east', east, 'sk-east');
    const westId = await addChannel('west', west, 'sk-west');
    await turn('thread-gone', 0);
    const boundToEast = served().east === 1;
    const boundId = boundToEast ? eastId : westId;
    const otherName = boundToEast ? 'west' : 'east';
    const r = await root.delete(`/api/channel/${boundId}`);
    expect(r.json()).toMatchObject({ success: true });
    // The relay hears of the deletion through the event bus: the channel leaves its gauge.
    await waitFor(async () =>
      (await t.relay.inject({ method: 'GET', url: '/metrics' })).body.includes(
        `turnpike_relay_channel_state{channel="${boundId}"`,
      )
        ? undefined
        : true,
    );
    const before = served();
    for (let n = 1; n < 4; n += 1) await turn('thread-gone', n);
    expect(served()[otherName] - before[otherName]).toBe(3);
  });

  it("keeps Claude Code's session (its header, or the session in metadata.user_id) on one Anthropic channel", async () => {
    const north = await startFakeProviders({ apiKey: 'sk-ant-north' });
    const south = await startFakeProviders({ apiKey: 'sk-ant-south' });
    try {
      await t.runtime.deps.options.set('ModelRatio', JSON.stringify({ 'agent-model': 1, 'agent-claude': 1 }));
      for (const [name, fake, key] of [
        ['north', north, 'sk-ant-north'],
        ['south', south, 'sk-ant-south'],
      ] as const)
        await root.post('/api/channel/', { name, type: 14, key, base_url: fake.url, models: 'agent-claude' });
      const send = (headers: Record<string, string>, body: Record<string, unknown> = {}) =>
        t.relay.inject({
          method: 'POST',
          url: '/v1/messages',
          headers: { ...auth, 'anthropic-version': '2023-06-01', ...headers },
          payload: {
            model: 'agent-claude',
            max_tokens: 64,
            messages: [{ role: 'user', content: 'hi' }],
            ...body,
          },
        });
      for (let i = 0; i < 6; i += 1)
        expect((await send({ 'x-claude-code-session-id': 'cc-session-1' })).statusCode).toBe(200);
      expect([north.requests.length, south.requests.length].sort()).toEqual([0, 6]);
      north.requests.length = 0;
      south.requests.length = 0;
      const metadata = { user_id: 'user_ab12_account_cd34_session_5e6f7a8b-0000-1111-2222-333344445555' };
      for (let i = 0; i < 6; i += 1) expect((await send({}, { metadata })).statusCode).toBe(200);
      expect([north.requests.length, south.requests.length].sort()).toEqual([0, 6]);
    } finally {
      await north.close();
      await south.close();
    }
  });

  it('binds a session to the key of a multi-key channel, not only the channel', async () => {
    await addChannel('east pool', east, 'sk-east\nsk-east-2', {
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
    });
    const session = await runSession('thread-key', 6);
    expect(east.calls.size).toBe(1);
    expect(session.share).toBeGreaterThan(0.8);
    // Another session may land on the other key; each stays on its own.
    await runSession('thread-key-2', 3);
    expect([...east.calls.values()].sort()).toEqual([3, 6]);
  });
});
