/**
 * The console API as the browser tests call it beside the browser: to set the server up, to read the state behind
 * what a page shows, and to seed data for screenshots.
 */

/** The `{ success, message, data }` envelope of every /api answer. */
export interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

export interface ApiClient {
  userId: number;
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<Envelope<T>>;
  /** `call` that fails the test unless the answer says success. */
  ok<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

export interface Credentials {
  username: string;
  password: string;
}

/** The root account the browser suites set up. */
export const ROOT: Credentials = { username: 'root', password: 'root-pass-12' };

/** Completes the first-run setup with this root account (external operation mode). */
export async function setUp(baseUrl: string, root: Credentials): Promise<void> {
  const response = await fetch(`${baseUrl}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...root, confirmPassword: root.password }),
  });
  const body = (await response.json()) as Envelope<unknown>;
  if (!body.success) throw new Error(`setup failed: ${body.message}`);
}

/** Signs in with a password and answers a client that sends the session cookie and `New-Api-User`. */
export async function signIn(baseUrl: string, user: Credentials): Promise<ApiClient> {
  const response = await fetch(`${baseUrl}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  const signedIn = (await response.json()) as Envelope<{ id: number }>;
  if (!signedIn.success) throw new Error(`login of ${user.username} failed: ${signedIn.message}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const userId = signedIn.data.id;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> => {
    const answer = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        cookie,
        'New-Api-User': String(userId),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await answer.json()) as Envelope<T>;
  };
  return {
    userId,
    call,
    async ok<T>(method: string, path: string, body?: unknown) {
      const answer = await call<T>(method, path, body);
      if (!answer.success) throw new Error(`${method} ${path} failed: ${answer.message}`);
      return answer.data;
    },
  };
}

/** One option write, as the settings page sends it. */
export const setOption = (api: ApiClient, key: string, value: string) =>
  api.ok('PUT', '/api/option/', { key, value });

/** A chat completion with an API token, as a user's application would make it. */
export async function chatCompletion(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Polls `read` until `accept` takes its value (the relay writes usage in batches, about once a second). */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, what = 'the expected state' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The channel, token and code a screenshot run shows in its tables, made through the API; the token has budget
 * windows ($50 a day at 500,000 quota per dollar, 1000 requests in any 5 hours), so the list shows them.
 */
export async function seedOperations(
  baseUrl: string,
  api: ApiClient,
  upstreamUrl: string,
): Promise<{ tokenKey: string }> {
  await api.ok('POST', '/api/channel/', {
    name: 'fake-openai',
    type: 1,
    key: 'sk-fake-upstream',
    base_url: upstreamUrl,
    models: 'gpt-4o-mini,gpt-4o',
    group: 'default',
    test_model: 'gpt-4o-mini',
  });
  const channels = await api.ok<{ items: { id: number }[] }>('GET', '/api/channel/?p=1&page_size=10');
  const channelId = channels.items[0]?.id;
  if (channelId !== undefined) await api.call('GET', `/api/channel/test/${channelId}?model=gpt-4o-mini`);
  await api.ok('POST', '/api/token/', {
    name: 'my-app',
    remain_quota: 500000,
    expired_time: -1,
    unlimited_quota: false,
    quota_windows: [
      { unit: 'quota', limit: 25_000_000, period: 'day' },
      { unit: 'requests', limit: 1000, period: 'rolling', hours: 5 },
    ],
  });
  const tokens = await api.ok<{ items: { key: string }[] }>('GET', '/api/token/?p=1&size=10');
  const tokenKey = tokens.items[0]?.key ?? '';
  const [code] = await api.ok<string[]>('POST', '/api/redemption/', {
    name: 'welcome',
    quota: 5_000_000,
    count: 2,
  });
  if (code) await api.ok('POST', '/api/user/topup', { key: code });
  // the relay picks a new channel up from its cache a moment after it is saved (a debounced reload)
  await eventually(
    () =>
      chatCompletion(baseUrl, tokenKey, {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello there' }],
      }),
    (answer) => answer.status === 200,
    { what: 'a billed chat completion' },
  );
  return { tokenKey };
}
