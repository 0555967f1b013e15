import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatRequest } from '../messages.ts';
import { streamChat } from './playground.ts';

const body: ChatRequest = {
  model: 'm',
  group: '',
  messages: [{ role: 'user', content: 'q' }],
  stream: true,
  temperature: 0.5,
};

describe('streamChat', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('posts to /pg/chat/completions with the session cookie', async () => {
    const fetchMock = vi.fn(
      async () => new Response('data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } }),
    );
    vi.stubGlobal('fetch', fetchMock);
    const outcome = await streamChat(body, () => {}, new AbortController().signal);
    expect(outcome).toEqual({ kind: 'complete' });
    expect(fetchMock).toHaveBeenCalledWith(
      '/pg/chat/completions',
      expect.objectContaining({ method: 'POST', credentials: 'same-origin', body: JSON.stringify(body) }),
    );
  });

  it('turns a network failure into an error outcome with the reason', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    expect(await streamChat(body, () => {}, new AbortController().signal)).toEqual({
      kind: 'error',
      message: 'Error: Failed to fetch',
    });
  });

  it('uses a short plain-text error body, and the HTTP status for an HTML page', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('upstream busy', { status: 502 })),
    );
    expect(await streamChat(body, () => {}, new AbortController().signal)).toEqual({
      kind: 'error',
      message: 'upstream busy',
    });
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('<html>bad gateway</html>', { status: 502 })),
    );
    expect(await streamChat(body, () => {}, new AbortController().signal)).toEqual({
      kind: 'error',
      message: 'Error: HTTP 502',
    });
  });

  it('reads a reply that came back as one JSON body', async () => {
    const answer = { choices: [{ index: 0, message: { role: 'assistant', content: 'whole' } }] };
    vi.stubGlobal(
      'fetch',
      vi.fn(
        async () => new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } }),
      ),
    );
    const pieces: string[] = [];
    expect(await streamChat(body, (p) => pieces.push(p), new AbortController().signal)).toEqual({
      kind: 'complete',
    });
    expect(pieces).toEqual(['whole']);
  });
});
