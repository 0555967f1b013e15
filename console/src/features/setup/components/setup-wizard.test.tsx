import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeServer, renderScreen } from '../../../testing/render.tsx';
import { SetupWizard } from './setup-wizard.tsx';

const setupState = (over: Partial<{ status: boolean; root_init: boolean; database_type: string }> = {}) => ({
  'GET /api/setup': () => ({
    body: { success: true, data: { status: false, root_init: false, database_type: 'pglite', ...over } },
  }),
});

async function submitWith(fields: Record<string, string>) {
  for (const [label, value] of Object.entries(fields))
    await userEvent.type(screen.getByLabelText(label), value);
  await userEvent.click(screen.getByRole('button', { name: 'Initialise' }));
}

describe('setup wizard', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('warns about the embedded database on PGlite only', async () => {
    fakeServer(setupState());
    await renderScreen(() => <SetupWizard />);
    expect(await screen.findByTestId('db-warning')).toBeTruthy();
  });

  it('shows no database warning on Postgres', async () => {
    fakeServer(setupState({ database_type: 'postgres' }));
    await renderScreen(() => <SetupWizard />);
    await screen.findByText('Administrator account');
    expect(screen.queryByTestId('db-warning')).toBeNull();
  });

  it.each([
    [{}, 'Please enter the admin username'],
    [{ 'Admin username': '   ' }, 'Please enter the admin username'],
    [{ 'Admin username': 'admin', Password: 'short77' }, 'Password must be at least 8 characters long'],
    [
      { 'Admin username': 'admin', Password: 'password1', 'Confirm password': 'password2' },
      'The two passwords entered do not match',
    ],
  ])('rejects %o with "%s"', async (fields, message) => {
    const server = fakeServer(setupState());
    await renderScreen(() => <SetupWizard />);
    await screen.findByText('Administrator account');
    await submitWith(fields);
    expect(screen.getByRole('alert').textContent).toBe(message);
    expect(server.callsTo('POST', '/api/setup')).toHaveLength(0);
  });

  it('hides the admin section when the admin exists and submits the chosen mode', async () => {
    const server = fakeServer({
      ...setupState({ root_init: true }),
      'POST /api/setup': () => ({ body: { success: true } }),
    });
    const reload = vi.fn();
    await renderScreen(() => <SetupWizard reload={reload} />);
    expect(await screen.findByText('The administrator account is already initialised.')).toBeTruthy();
    expect(screen.queryByLabelText('Admin username')).toBeNull();
    await userEvent.click(screen.getByRole('radio', { name: 'Self-use' }));
    await userEvent.click(screen.getByRole('button', { name: 'Initialise' }));
    await waitFor(() => expect(server.callsTo('POST', '/api/setup')).toHaveLength(1));
    expect(server.callsTo('POST', '/api/setup')[0]?.body).toMatchObject({
      SelfUseModeEnabled: true,
      DemoSiteEnabled: false,
    });
    await waitFor(() => expect(reload).toHaveBeenCalledOnce(), { timeout: 3000 });
  });

  it('shows the server message when initialisation fails', async () => {
    fakeServer({
      ...setupState(),
      'POST /api/setup': () => ({
        status: 400,
        body: { success: false, message: 'the system is already set up' },
      }),
    });
    await renderScreen(() => <SetupWizard reload={() => {}} />);
    await screen.findByText('Administrator account');
    await submitWith({ 'Admin username': 'admin', Password: 'password1', 'Confirm password': 'password1' });
    expect(await screen.findByText('the system is already set up')).toBeTruthy();
  });

  it('explains the usage modes in a help dialog', async () => {
    fakeServer(setupState());
    await renderScreen(() => <SetupWizard />);
    await userEvent.click(await screen.findByRole('button', { name: 'About usage modes' }));
    expect(await screen.findByText(/Self-use: for yourself only/)).toBeTruthy();
  });

  it('goes to the home page when the system is already set up', async () => {
    fakeServer(setupState({ status: true, root_init: true }));
    const { router } = await renderScreen(() => <SetupWizard />, { path: '/setup' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });
});
