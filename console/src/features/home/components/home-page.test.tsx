import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { AboutPage, HomePage, renderContent } from './home-page.tsx';

const routes = (content: string, notice = '') => ({
  'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
  'GET /api/home_page_content': () => ({ body: { success: true, data: content } }),
  'GET /api/notice': () => ({ body: { success: true, data: notice } }),
});

describe('home page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('renders Markdown content, sanitised', async () => {
    fakeServer(routes('# Hello\n\n<img src=x onerror="alert(1)">'));
    await renderScreen(() => <HomePage />);
    const article = await screen.findByTestId('home-content');
    expect(article.querySelector('h1')?.textContent).toBe('Hello');
    expect(article.innerHTML).not.toContain('onerror');
  });

  it('shows a URL in an iframe', async () => {
    fakeServer(routes('https://example.com/welcome'));
    await renderScreen(() => <HomePage />);
    expect((await screen.findByTestId('home-content')).getAttribute('src')).toBe(
      'https://example.com/welcome',
    );
  });

  it('shows the default welcome without content', async () => {
    fakeServer(routes(''));
    await renderScreen(() => <HomePage />);
    expect(await screen.findByText('Welcome to Turnpike')).toBeTruthy();
  });

  it('does not treat text that merely starts with a URL as a page to embed', () => {
    expect(renderContent('https://a.example and more').kind).toBe('html');
  });

  it('shows the announcement above the page, sanitised, until the visitor closes it', async () => {
    fakeServer(routes('', '**Maintenance** tonight <script>alert(1)</script>'));
    await renderScreen(() => <HomePage />);
    const notice = await screen.findByRole('complementary', { name: 'Announcement' });
    expect(notice.querySelector('strong')?.textContent).toBe('Maintenance');
    expect(notice.querySelector('script')).toBeNull();
    expect(screen.getByText('Welcome to Turnpike')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Close announcement' }));
    expect(screen.queryByTestId('notice')).toBeNull();
  });

  it('shows no announcement when none is set', async () => {
    const server = fakeServer(routes(''));
    await renderScreen(() => <HomePage />);
    await screen.findByText('Welcome to Turnpike');
    await waitFor(() => expect(server.callsTo('GET', '/api/notice')).toHaveLength(1));
    expect(screen.queryByTestId('notice')).toBeNull();
  });

  it('about page shows the administrator text, or says it is not written yet', async () => {
    let about = '## Who we are';
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/about': () => ({ body: { success: true, data: about } }),
    });
    const first = await renderScreen(() => <AboutPage />);
    expect((await screen.findByTestId('about-content')).querySelector('h2')?.textContent).toBe('Who we are');
    first.unmount();
    about = '';
    await renderScreen(() => <AboutPage />);
    expect(await screen.findByText(/has not written an about page yet/)).toBeTruthy();
  });
});
