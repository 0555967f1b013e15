import i18next from 'i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeServer } from '../testing/render.tsx';
import { ApiError, api, setLoginRedirect, TRANSLATED_ERROR_CODES } from './api.ts';
import { getSessionUser, setSessionUser } from './session.ts';
import { getToasts } from './toast.ts';

const user = { id: 42, username: 'alice', display_name: '', role: 1, status: 1, group: 'default' };

describe('request client', () => {
  const redirect = vi.fn();
  beforeEach(() => setLoginRedirect(redirect));
  afterEach(() => {
    vi.unstubAllGlobals();
    redirect.mockReset();
  });

  it('sends New-Api-User with the stored user id and unwraps data', async () => {
    setSessionUser(user);
    const server = fakeServer({
      'GET /api/user/self': () => ({ body: { success: true, data: { id: 42 } } }),
    });
    await expect(api.get('/api/user/self')).resolves.toEqual({ id: 42 });
    expect(server.calls[0]?.headers['New-Api-User']).toBe('42');
  });

  it('sends no New-Api-User header for a visitor', async () => {
    const server = fakeServer({ 'GET /api/status': () => ({ body: { success: true, data: {} } }) });
    await api.get('/api/status');
    expect(server.calls[0]?.headers['New-Api-User']).toBeUndefined();
  });

  it('turns success:false into an error toast with the server message', async () => {
    fakeServer({
      'POST /api/token': () => ({ status: 400, body: { success: false, message: 'name too long' } }),
    });
    await expect(api.post('/api/token', {})).rejects.toThrow('name too long');
    expect(getToasts().some((t) => t.kind === 'error' && t.text === 'name too long')).toBe(true);
  });

  it("says a known refusal code in Chinese, keeping the server's English reason, and English as the server said it", async () => {
    const refusal = {
      status: 403,
      body: {
        success: false,
        code: 'FORBIDDEN',
        message: 'SystemName is a system setting; only the root user may change it',
      },
    };
    fakeServer({ 'PUT /api/option/': () => refusal });
    await expect(api.put('/api/option/', {})).rejects.toThrow(
      'SystemName is a system setting; only the root user may change it',
    );
    await i18next.changeLanguage('zh');
    try {
      const error = await api.put('/api/option/', {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).message).toBe(
        '没有权限执行此操作：SystemName is a system setting; only the root user may change it',
      );
      expect((error as ApiError).code).toBe('FORBIDDEN');
      // every translated code has a Chinese sentence of its own, never the bare English message
      for (const code of TRANSLATED_ERROR_CODES) {
        const text = i18next.t(`error.code.${code}`, { detail: 'why' });
        expect(text, code).toMatch(/[\u4e00-\u9fff]/);
      }
      // an unknown code falls back to the server's message
      fakeServer({
        'PUT /api/option/': () => ({
          status: 418,
          body: { success: false, code: 'TEAPOT', message: 'short and stout' },
        }),
      });
      await expect(api.put('/api/option/', {})).rejects.toThrow(/^short and stout$/);
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it("says a database outage in the reader's language, with the server's words after it", async () => {
    await i18next.changeLanguage('zh');
    try {
      fakeServer({
        'GET /api/channel/': () => ({
          status: 503,
          body: {
            success: false,
            code: 'DATABASE_UNAVAILABLE',
            message: 'the database is unreachable; try again shortly',
          },
        }),
      });
      const error = await api.get('/api/channel/').catch((e: unknown) => e);
      expect((error as ApiError).status).toBe(503);
      expect((error as ApiError).message).toBe(
        '数据库暂时无法访问，请稍后重试：the database is unreachable; try again shortly',
      );
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('keeps quiet when asked to be silent', async () => {
    fakeServer({
      'POST /api/quiet': () => ({ status: 400, body: { success: false, message: 'quiet failure' } }),
    });
    await expect(api.post('/api/quiet', {}, { silent: true })).rejects.toThrow('quiet failure');
    expect(getToasts().some((t) => t.text === 'quiet failure')).toBe(false);
  });

  it('on 401 forgets the user and sends the browser to /login?expired=true', async () => {
    setSessionUser(user);
    fakeServer({ 'GET /api/user/self': () => ({ status: 401, body: { success: false, message: 'no' } }) });
    const error = await api.get('/api/user/self').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect(getSessionUser()).toBeNull();
    expect(redirect).toHaveBeenCalledOnce();
  });

  it.each([
    [429, 'Too many requests, please try again later'],
    [500, 'Server internal error, please contact the administrator'],
    [405, 'This site is a demo; there is no back end'],
  ])('shows the catalogue message for HTTP %i', async (status, message) => {
    fakeServer({ 'GET /api/x': () => ({ status, body: { success: false, message: 'internal detail' } }) });
    await expect(api.get('/api/x')).rejects.toThrow(message);
  });

  it('reports a network failure as "Error: " plus the reason', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    await expect(api.get('/api/x', { silent: true })).rejects.toThrow('Error: Failed to fetch');
  });
});
