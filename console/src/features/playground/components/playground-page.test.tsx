import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { type FakeCall, fakeServer, renderScreen } from '../../../testing/render.tsx';
import { PlaygroundPage } from './playground-page.tsx';

const encoder = new TextEncoder();
const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** A streamed answer the test feeds piece by piece. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    response: () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    send: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close(),
  };
}

type PgAnswer = () => Response;

/** The console API as canned JSON, and /pg/chat/completions answered by `pg`. */
function serve(pg: PgAnswer, models: string[] = ['gpt-4o-mini', 'gpt-4o']) {
  const server = fakeServer({
    'GET /api/user/models': () => ({ body: { success: true, data: models } }),
    'GET /api/user/self/groups': () => ({
      body: {
        success: true,
        data: { default: { desc: 'Default', ratio: 1 }, vip: { desc: 'VIP', ratio: 2 } },
      },
    }),
  });
  const apiFetch = globalThis.fetch;
  const chats: FakeCall[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input) !== '/pg/chat/completions') return apiFetch(input, init);
      chats.push({
        method: init?.method ?? 'GET',
        url: String(input),
        body: JSON.parse(String(init?.body)),
        headers: init?.headers as Record<string, string>,
      });
      return pg();
    }),
  );
  return { ...server, chats };
}

const messages = () => screen.getAllByTestId('message');
const lastMessage = () => messages()[messages().length - 1] as HTMLElement;

async function ask(user: ReturnType<typeof userEvent.setup>, text: string) {
  await user.type(screen.getByLabelText('Message'), text);
  await user.click(screen.getByRole('button', { name: 'Send' }));
}

describe('playground', () => {
  beforeEach(() =>
    setSessionUser({ id: 7, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => vi.unstubAllGlobals());

  it('starts with the greeting exchange and the default settings', async () => {
    serve(() => controlledStream().response());
    await renderScreen(() => <PlaygroundPage />);
    expect(messages().map((m) => m.textContent)).toEqual([
      'You:Hello',
      'Assistant:Hello! How can I help you today?',
    ]);
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o-mini');
    expect((screen.getByLabelText('System prompt') as HTMLTextAreaElement).value).toMatch(
      /helpful assistant/,
    );
    expect(await screen.findByRole('option', { name: 'vip — VIP (ratio 2)' })).toBeTruthy();
  });

  it('shows the reply progressively as chunks arrive, then completes on [DONE]', async () => {
    const stream = controlledStream();
    const server = serve(() => stream.response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await user.selectOptions(await screen.findByLabelText('Group'), 'vip');
    await ask(user, 'Tell me a story');

    expect(lastMessage().dataset.status).toBe('loading');
    expect(within(lastMessage()).getByText('Thinking…')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();

    stream.send(': PING\n\n');
    stream.send(chunk('Once upon'));
    await waitFor(() => expect(lastMessage().textContent).toContain('Once upon'));
    expect(lastMessage().dataset.status).toBe('incomplete');

    // a chunk split across two reads
    const next = chunk(' a time.');
    stream.send(next.slice(0, 12));
    stream.send(next.slice(12));
    await waitFor(() => expect(lastMessage().textContent).toContain('Once upon a time.'));

    stream.send(': x-turnpike-quota: 42\n\ndata: [DONE]\n\n');
    await waitFor(() => expect(lastMessage().dataset.status).toBe('complete'));
    expect(lastMessage().textContent).toBe('Assistant:Once upon a time.');
    expect(screen.getByRole('button', { name: 'Send' })).toBeTruthy();

    const call = server.chats[0];
    expect(call?.headers['New-Api-User']).toBe('7');
    expect(call?.body).toMatchObject({
      model: 'gpt-4o-mini',
      group: 'vip',
      stream: true,
      temperature: 0.1,
      messages: [
        { role: 'system', content: expect.stringMatching(/helpful assistant/) },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hello! How can I help you today?' },
        { role: 'user', content: 'Tell me a story' },
      ],
    });
    expect(call?.body).not.toHaveProperty('max_tokens');
  });

  it('shows the error message of a refused request on the reply', async () => {
    serve(
      () =>
        new Response(
          JSON.stringify({
            error: {
              message: 'user quota is not enough',
              type: 'insufficient_quota',
              param: null,
              code: null,
            },
          }),
          { status: 403, headers: { 'content-type': 'application/json' } },
        ),
    );
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await ask(user, 'Hi');
    await waitFor(() => expect(lastMessage().dataset.status).toBe('error'));
    expect(lastMessage().textContent).toContain('Error: user quota is not enough');
    expect(screen.getByRole('button', { name: 'Send' })).toBeTruthy();
  });

  it('keeps what arrived and adds the error when the stream reports one', async () => {
    const stream = controlledStream();
    serve(() => stream.response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await ask(user, 'Hi');
    stream.send(chunk('Partial'));
    stream.send(`data: ${JSON.stringify({ error: { message: 'stream timed out', type: 'api_error' } })}\n\n`);
    await waitFor(() => expect(lastMessage().dataset.status).toBe('error'));
    expect(lastMessage().textContent).toContain('Partial\nstream timed out');
  });

  it('stops a reply on its way and keeps the text so far', async () => {
    const stream = controlledStream();
    serve(() => stream.response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await ask(user, 'Count to a million');
    stream.send(chunk('1, 2, 3'));
    await waitFor(() => expect(lastMessage().textContent).toContain('1, 2, 3'));
    await user.click(screen.getByRole('button', { name: 'Stop' }));
    expect(within(lastMessage()).getByText('Stopped')).toBeTruthy();
    expect(lastMessage().dataset.status).toBe('complete');
    expect(await screen.findByRole('button', { name: 'Send' })).toBeTruthy();
  });

  it('completes a reply whose stream closes without [DONE]', async () => {
    const stream = controlledStream();
    serve(() => stream.response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await ask(user, 'Hi');
    stream.send(chunk('Bye'));
    stream.close();
    await waitFor(() => expect(lastMessage().dataset.status).toBe('complete'));
    expect(lastMessage().textContent).toBe('Assistant:Bye');
  });

  it('clears the context after confirmation', async () => {
    serve(() => controlledStream().response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await user.click(screen.getByRole('button', { name: 'Clear context' }));
    const dialog = await screen.findByRole('dialog');
    await user.click(within(dialog).getByRole('button', { name: 'Clear' }));
    expect(await screen.findByText(/The context is clear/)).toBeTruthy();
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
    expect(screen.getByRole('button', { name: 'Clear context' })).toHaveProperty('disabled', true);
  });

  it('asks for a model and a valid max tokens before sending anything', async () => {
    const server = serve(() => controlledStream().response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await user.clear(screen.getByLabelText('Model'));
    await user.clear(screen.getByLabelText('Max tokens'));
    await user.type(screen.getByLabelText('Max tokens'), '1.5');
    await ask(user, 'Hi');
    expect(await screen.findAllByText('Choose a model first')).not.toHaveLength(0);
    expect(screen.getByText('Max tokens must be a whole number of 0 or more')).toBeTruthy();
    expect(server.chats).toHaveLength(0);
    // the question stays in the box
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).value).toBe('Hi');
  });

  it('sends max tokens as an integer when one is set', async () => {
    const stream = controlledStream();
    const server = serve(() => stream.response());
    const user = userEvent.setup();
    await renderScreen(() => <PlaygroundPage />);
    await user.clear(screen.getByLabelText('Max tokens'));
    await user.type(screen.getByLabelText('Max tokens'), '300');
    await ask(user, 'Hi');
    await waitFor(() => expect(server.chats).toHaveLength(1));
    expect(server.chats[0]?.body).toMatchObject({ max_tokens: 300 });
  });

  it('picks the first available model when the default one is not offered', async () => {
    serve(() => controlledStream().response(), ['claude-3-5-sonnet', 'deepseek-chat']);
    await renderScreen(() => <PlaygroundPage />);
    await waitFor(() =>
      expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('claude-3-5-sonnet'),
    );
  });

  it('says the session expired when the page is opened with the expired flag', async () => {
    serve(() => controlledStream().response());
    await renderScreen(() => <PlaygroundPage expired />);
    expect(screen.getByText('Not logged in or session expired. Please login again!')).toBeTruthy();
  });

  describe('on a phone', () => {
    const width = window.innerWidth;
    beforeEach(() => {
      window.innerWidth = 375;
    });
    afterEach(() => {
      window.innerWidth = width;
    });

    it('hides the settings panel behind a toggle', async () => {
      serve(() => controlledStream().response());
      const user = userEvent.setup();
      await renderScreen(() => <PlaygroundPage />);
      expect(screen.queryByRole('region', { name: 'Settings' })).toBeNull();
      const toggle = screen.getByRole('button', { name: 'Show settings' });
      expect(toggle.getAttribute('aria-expanded')).toBe('false');
      await user.click(toggle);
      expect(screen.getByRole('region', { name: 'Settings' })).toBeTruthy();
      await user.click(screen.getByRole('button', { name: 'Hide settings' }));
      expect(screen.queryByRole('region', { name: 'Settings' })).toBeNull();
    });

    it('opens the settings when a send is blocked by them', async () => {
      serve(() => controlledStream().response());
      const user = userEvent.setup();
      await renderScreen(() => <PlaygroundPage />);
      await user.click(screen.getByRole('button', { name: 'Show settings' }));
      await user.clear(screen.getByLabelText('Model'));
      await user.click(screen.getByRole('button', { name: 'Hide settings' }));
      await ask(user, 'Hi');
      expect(screen.getByRole('region', { name: 'Settings' })).toBeTruthy();
    });
  });
});
