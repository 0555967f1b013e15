import { QueryClient } from '@tanstack/react-query';
import { isRedirect } from '@tanstack/react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, makeStatus } from '../testing/render.tsx';
import { requireSetup, requireUser } from './guards.ts';
import { Role, setSessionUser } from './session.ts';

const user = { id: 3, username: 'carol', display_name: '', status: 1, group: 'default' };

async function redirectOf(fn: () => unknown): Promise<string | null> {
  try {
    await fn();
    return null;
  } catch (error) {
    if (isRedirect(error)) return String(error.options.to);
    throw error;
  }
}

describe('route guards', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('sends every page to /setup until setup is done', async () => {
    fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus({ setup: false }) } }),
    });
    expect(await redirectOf(() => requireSetup(new QueryClient(), '/login'))).toBe('/setup');
    expect(await redirectOf(() => requireSetup(new QueryClient(), '/setup'))).toBeNull();
  });

  it('lets pages through once set up, and caches the status locally', async () => {
    fakeServer({
      'GET /api/status': () => ({
        body: {
          success: true,
          data: makeStatus({ footer_html: '<i>x</i>', enable_task: true, chats: [{ Lobe: 'https://l' }] }),
        },
      }),
    });
    expect(await redirectOf(() => requireSetup(new QueryClient(), '/token'))).toBeNull();
    expect(JSON.parse(localStorage.getItem('status') ?? '{}').setup).toBe(true);
    expect(localStorage.getItem('footer_html')).toBe('<i>x</i>');
    expect(localStorage.getItem('enable_task')).toBe('true');
    expect(JSON.parse(localStorage.getItem('chats') ?? '[]')).toEqual([{ Lobe: 'https://l' }]);
  });

  it('falls back to the cached status when the server is unreachable', async () => {
    localStorage.setItem('status', JSON.stringify(makeStatus({ setup: false })));
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('offline'))),
    );
    expect(await redirectOf(() => requireSetup(new QueryClient(), '/'))).toBe('/setup');
  });

  it('sends a visitor on a guarded page to /login and a normal user away from admin pages', async () => {
    expect(await redirectOf(() => requireUser())).toBe('/login');
    setSessionUser({ ...user, role: Role.User });
    expect(await redirectOf(() => requireUser())).toBeNull();
    expect(await redirectOf(() => requireUser(Role.Admin))).toBe('/');
    setSessionUser({ ...user, role: Role.Admin });
    expect(await redirectOf(() => requireUser(Role.Admin))).toBeNull();
    expect(await redirectOf(() => requireUser(Role.Root))).toBe('/');
  });
});
