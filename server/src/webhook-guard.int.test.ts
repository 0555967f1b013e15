/**
 * The webhook hole end to end (docs/adr/0039): a self-registered user aims their low-balance webhook at a service
 * on the gateway's own network, spends below their threshold through the relay, and the gateway must not call it.
 * The user's setting goes in through `PUT /api/user/setting`, the debit through `/v1/chat/completions` and the
 * batched writer, the notice through the relay's notifier; the listener counts the connections it accepts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeOpenAi, startFakeOpenAi } from '@turnpike/relay/testing/fake-openai';
import { waitFor } from '@turnpike/relay/testing/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayTestApp, type RelayTestApp } from './testing/all-test-app.ts';
import { type ConsoleClient, registerUser, setupRoot } from './testing/test-app.ts';

const MODEL = 'gpt-4o-mini';
/** USD per call: 0.01 × 500 000 quota per dollar = 5 000 quota a call. */
const PRICE = 0.01;
const START = 100_000;
const THRESHOLD = 99_000;

let t: RelayTestApp;
let fake: FakeOpenAi;
let root: ConsoleClient;
let inside: http.Server;
let connections = 0;
const requests: string[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAi({});
  t = await createRelayTestApp();
  await t.seedChannel({ key: 'sk-upstream', baseUrl: fake.url, models: MODEL });
  await t.startRelay();
  root = await setupRoot(t.app);
  await root.put('/api/option/', { key: 'ModelPrice', value: JSON.stringify({ [MODEL]: PRICE }) });
  inside = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  inside.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  inside?.closeAllConnections();
  await new Promise((resolve) => inside?.close(resolve));
  await t?.close();
  await fake?.close();
});

const allowLoopback = (allowed: boolean) =>
  root.put('/api/option/', { key: 'fetch_setting.allowed_ranges', value: allowed ? '127.0.0.0/8' : '' });

/** A user signed up through the console with a balance root gave, and a key of their own. */
async function signUp(username: string) {
  const client = await registerUser(t.app, username);
  const { id } = (await client.get('/api/user/self')).json().data as { id: number };
  expect((await root.put('/api/user/', { id, quota: START })).json().success).toBe(true);
  const { key } = await t.seedToken(id);
  const spend = async () => {
    const answer = await t.relay.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer sk-${key}` },
      payload: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(answer.statusCode, answer.body).toBe(200);
  };
  /** The notice failures written to the user's own log, as the user lists them. */
  const noticeFailures = async () =>
    (((await client.get('/api/log/self?p=1&page_size=50')).json().data.items ?? []) as { content: string }[])
      .map((row) => row.content)
      .filter((content) => content.startsWith('could not deliver'));
  return { id, client, spend, noticeFailures };
}

const hookUrl = () =>
  `http://127.0.0.1:${(inside.address() as AddressInfo).port}/internal-admin/delete-everything`;

describe('a low-balance webhook aimed inside the gateway', () => {
  it('cannot be saved as a literal loopback address', async () => {
    const { client } = await signUp('mallory');
    const saved = await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: THRESHOLD,
      webhook_url: hookUrl(),
    });
    expect(saved.json()).toMatchObject({ success: false });
    expect(saved.json().message).toContain('webhook_url must not point to a private, loopback');
  });

  it('is not called after a debit crosses the threshold, and the user reads only that it is not allowed', async () => {
    // Saved while root allowed loopback (or while its name resolved outside); root then takes the allowance back.
    await allowLoopback(true);
    const { client, spend, noticeFailures } = await signUp('trudy');
    const saved = await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: THRESHOLD,
      webhook_url: hookUrl(),
    });
    expect(saved.json().success, saved.body).toBe(true);
    await allowLoopback(false);

    await spend();
    // Until the notice is settled one way or the other: written off in the log, or delivered.
    const failures = await waitFor(async () => {
      const rows = await noticeFailures();
      return rows.length > 0 || requests.length > 0 ? rows : undefined;
    });
    expect({ connections, requests }).toEqual({ connections: 0, requests: [] });
    expect(failures).toEqual([
      'could not deliver the "Your balance is running low" notice: the webhook address is not allowed',
    ]);
  });

  it('is called once root allows the loopback range (the same path, so the zero above is not silence)', async () => {
    await allowLoopback(true);
    const { client, spend } = await signUp('walter');
    await client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: THRESHOLD,
      webhook_url: hookUrl(),
    });
    await spend();
    await waitFor(() => (requests.length > 0 ? requests : undefined));
    expect(requests).toEqual(['/internal-admin/delete-everything']);
  });
});
