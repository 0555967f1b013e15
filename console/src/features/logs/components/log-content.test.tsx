import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionUser } from '../../../lib/session.ts';
import { fakeServer, makeStatus, renderScreen } from '../../../testing/render.tsx';
import { LogContent } from './log-content.tsx';

describe('a log detail’s content section', () => {
  beforeEach(() =>
    setSessionUser({ id: 4, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' }),
  );
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });

  it('loads the prompt and answer when asked, saying what was redacted and cut', async () => {
    const server = fakeServer({
      'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }),
      'GET /api/log/content/req-7': () => ({
        body: {
          success: true,
          data: {
            request_id: 'req-7',
            created_at: 1,
            model_name: 'gpt-4o-mini',
            prompt: '{"messages":[{"role":"user","content":"mail [redacted:email]"}]}',
            answer: 'noted',
            truncated: true,
            redactions: 1,
          },
        },
      }),
    });
    const user = userEvent.setup();
    await renderScreen(() => <LogContent requestId="req-7" />);
    expect(server.callsTo('GET', '/api/log/content/req-7')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Show content' }));
    expect(await screen.findByText('noted')).toBeTruthy();
    expect(screen.getByText(/"content": "mail \[redacted:email\]"/)).toBeTruthy();
    expect(screen.getByText(/Cut at the size limit · 1 item\(s\) redacted/)).toBeTruthy();
  });

  it('says when the call kept no content', async () => {
    fakeServer({ 'GET /api/status': () => ({ body: { success: true, data: makeStatus() } }) });
    const user = userEvent.setup();
    await renderScreen(() => <LogContent requestId="req-8" />);
    await user.click(screen.getByRole('button', { name: 'Show content' }));
    expect(await screen.findByText('No content was kept for this call.')).toBeTruthy();
  });
});
