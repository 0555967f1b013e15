import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { HomePage, renderContent } from './home-page.tsx';

const routes = (content: string) => ({
  'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
  'GET /api/home_page_content': () => ({ body: { success: true, data: content } }),
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
});
