import { screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import type { SiteStatus } from '../../../lib/status.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import type { TokenRow } from '../../tokens/api/tokens.ts';
import { ChatPage } from './chat-page.tsx';
import { Chat2LinkPage } from './chat2link-page.tsx';

const token = (id: number, key: string, status: number): TokenRow => ({
  id,
  user_id: 1,
  key,
  status,
  name: `t${id}`,
  created_time: 0,
  accessed_time: 0,
  expired_time: -1,
  remain_quota: 0,
  unlimited_quota: true,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: 0,
  group: '',
  rpm_limit: 0,
  tpm_limit: 0,
  concurrency_limit: 0,
});

const chats: Array<Record<string, string>> = [
  { NextChat: 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
  { OpenCat: 'opencat://team/join?domain={address}&token={key}' },
];

function serve(
  status: Partial<SiteStatus>,
  tokens: TokenRow[] = [token(1, 'sk-off', 2), token(2, 'sk-on', 1)],
) {
  return fakeServer({
    'GET /api/status': () => ({ body: { success: true, data: makeStatus(status) } }),
    'GET /api/token/': () => ({
      body: { success: true, data: { items: tokens, total: tokens.length, page: 1, page_size: 100 } },
    }),
  });
}

beforeEach(() =>
  setSessionUser({ id: 1, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
);
afterEach(() => vi.unstubAllGlobals());

describe('chat page /chat/{id}', () => {
  it('frames the chosen chat with the first enabled token and the server address', async () => {
    const server = serve({ chats, server_address: 'https://gw.example.com' });
    await renderScreen(() => <ChatPage id="0" />);
    const frame = (await screen.findByTitle('NextChat')) as HTMLIFrameElement;
    expect(frame.tagName).toBe('IFRAME');
    expect(frame.getAttribute('src')).toBe(
      'https://app.nextchat.dev/#/?settings={"key":"sk-on","url":"https%3A%2F%2Fgw.example.com"}',
    );
    const url = new URL(server.callsTo('GET', '/api/token/')[0]?.url ?? '', 'http://x');
    expect(url.searchParams.get('size')).toBe('100');
  });

  it('falls back to the page origin when no server address is set', async () => {
    serve({ chats, server_address: '' });
    await renderScreen(() => <ChatPage id={undefined} />);
    const frame = await screen.findByTitle('NextChat');
    expect(frame.getAttribute('src')).toContain(`"url":"${encodeURIComponent(window.location.origin)}"`);
  });

  it('offers an app link, which cannot load in a frame, as a link to open', async () => {
    serve({ chats, server_address: 'https://gw' });
    await renderScreen(() => <ChatPage id="1" />);
    const open = await screen.findByRole('link', { name: 'Open OpenCat' });
    expect(open.getAttribute('href')).toBe('opencat://team/join?domain=https%3A%2F%2Fgw&token=sk-on');
  });

  it('says so when there is no such chat link, and lists the ones there are', async () => {
    const server = serve({ chats });
    await renderScreen(() => <ChatPage id="5" />);
    expect(await screen.findByText('There is no such chat link')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'OpenCat' }).getAttribute('href')).toBe('/chat/1');
    expect(server.callsTo('GET', '/api/token/')).toHaveLength(0);
  });

  it('asks for the administrator when no chat links are configured', async () => {
    serve({ chats: [] });
    await renderScreen(() => <ChatPage id="0" />);
    expect(await screen.findByText('Please contact the administrator to configure chat links')).toBeTruthy();
  });

  it('reports a broken stored chats configuration', async () => {
    serve({});
    localStorage.setItem('chats', '{broken');
    await renderScreen(() => <ChatPage id="0" />);
    expect(await screen.findByText('Chat link configuration error, contact the administrator')).toBeTruthy();
  });

  it('with no enabled token, says so and opens the token page after 1.5 s', async () => {
    serve({ chats }, [token(1, 'sk-off', 2)]);
    await renderScreen(() => <ChatPage id="0" />);
    expect(
      await screen.findAllByText('There is no enabled token available, confirm a token is enabled!'),
    ).not.toHaveLength(0);
    expect(screen.queryByTestId('page')).toBeNull();
    expect((await screen.findByTestId('page', {}, { timeout: 3000 })).textContent).toBe('/token');
  });
});

describe('chat2link page', () => {
  it('builds the link from the token key and the server address and goes there', async () => {
    serve({ chat_link: chats[0]?.NextChat ?? '', server_address: 'https://gw' });
    const open = vi.fn();
    await renderScreen(() => <Chat2LinkPage open={open} />);
    const expected = 'https://app.nextchat.dev/#/?settings={"key":"sk-on","url":"https%3A%2F%2Fgw"}';
    await waitFor(() => expect(open).toHaveBeenCalledWith(expected));
    expect(open).toHaveBeenCalledTimes(1);
    expect(screen.getByText('Opening the chat…')).toBeTruthy();
    expect(screen.getByRole('link', { name: /Open the chat yourself/ }).getAttribute('href')).toBe(expected);
  });

  it('adds the settings fragment to a chat link without placeholders', async () => {
    serve({ chat_link: 'https://chat.example.com', server_address: 'https://gw' });
    const open = vi.fn();
    await renderScreen(() => <Chat2LinkPage open={open} />);
    await waitFor(() =>
      expect(open).toHaveBeenCalledWith(
        'https://chat.example.com/#/?settings={"key":"sk-on","url":"https%3A%2F%2Fgw"}',
      ),
    );
  });

  it('stays put and says why when no chat link is configured', async () => {
    serve({ chat_link: '' });
    const open = vi.fn();
    await renderScreen(() => <Chat2LinkPage open={open} />);
    expect(await screen.findByText('Please contact the administrator to configure chat links')).toBeTruthy();
    expect(open).not.toHaveBeenCalled();
  });

  it('with no enabled token, does not leave and sends the user to the token page', async () => {
    serve({ chat_link: 'https://chat.example.com' }, []);
    const open = vi.fn();
    await renderScreen(() => <Chat2LinkPage open={open} />);
    expect((await screen.findByTestId('page', {}, { timeout: 3000 })).textContent).toBe('/token');
    expect(open).not.toHaveBeenCalled();
  });
});
