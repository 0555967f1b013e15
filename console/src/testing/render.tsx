import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  Outlet,
  RouterProvider,
} from '@tanstack/react-router';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { vi } from 'vitest';
import { Toaster } from '../components/ui/toaster.tsx';
import type { SiteStatus } from '../lib/status.ts';

/** A status object with every switch off, to override per test. */
export function makeStatus(overrides: Partial<SiteStatus> = {}): SiteStatus {
  return {
    version: 'test',
    start_time: 0,
    setup: true,
    system_name: 'Turnpike',
    logo: '',
    footer_html: '',
    server_address: '',
    price: 7.3,
    min_topup: 1,
    top_up_link: '',
    docs_link: '',
    quota_per_unit: 500000,
    display_in_currency: true,
    display_token_stat: true,
    enable_drawing: false,
    enable_task: false,
    enable_data_export: false,
    default_collapse_sidebar: false,
    enable_online_topup: false,
    mj_notify_enabled: false,
    chat_link: '',
    chat_link2: '',
    demo_site_enabled: false,
    self_use_mode_enabled: false,
    email_verification: false,
    register_enabled: true,
    password_login_enabled: true,
    password_register_enabled: true,
    turnstile_check: false,
    turnstile_site_key: '',
    github_oauth: false,
    github_client_id: '',
    linuxdo_oauth: false,
    linuxdo_client_id: '',
    telegram_oauth: false,
    telegram_bot_name: '',
    wechat_login: false,
    wechat_qrcode: '',
    oidc_enabled: false,
    oidc_client_id: '',
    oidc_authorization_endpoint: '',
    ...overrides,
  };
}

export interface FakeCall {
  method: string;
  url: string;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Replaces fetch with a table of canned answers keyed by "METHOD /path" (query ignored). Component tests check
 * what the screen sends and shows; the real server is exercised by the e2e tests.
 */
export function fakeServer(routes: Record<string, (call: FakeCall) => { status?: number; body: unknown }>) {
  const calls: FakeCall[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const method = (init?.method ?? 'GET').toUpperCase();
    const call: FakeCall = {
      method,
      url,
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      headers: (init?.headers ?? {}) as Record<string, string>,
    };
    calls.push(call);
    const handler = routes[`${method} ${url.split('?')[0]}`];
    const answer = handler ? handler(call) : { status: 404, body: { success: false, message: 'not found' } };
    return new Response(JSON.stringify(answer.body), {
      status: answer.status ?? 200,
      headers: { 'content-type': 'application/json' },
    });
  });
  vi.stubGlobal('fetch', fetchMock);
  return {
    calls,
    callsTo: (method: string, path: string) =>
      calls.filter((c) => c.method === method && c.url.split('?')[0] === path),
  };
}

/** The JSON options a screen saved through `PUT /api/option/`, by key, each value parsed. */
export function savedJsonOptions(server: ReturnType<typeof fakeServer>): Record<string, unknown> {
  return Object.fromEntries(
    server.callsTo('PUT', '/api/option/').map((call) => {
      const body = call.body as { key: string; value: string };
      return [body.key, JSON.parse(body.value)];
    }),
  );
}

/**
 * Renders a screen inside a memory router (with stub pages for where it navigates) and a fresh query client.
 * `search` opens it with that search string (`?keyword=a`), as a link or a reload would. `strictMode` runs it as the product does in development: effects mount, unmount and mount again.
 */
export async function renderScreen(
  ui: () => ReactNode,
  {
    path = '/screen',
    strictMode = false,
    search = '',
  }: { path?: string; strictMode?: boolean; search?: string } = {},
) {
  const rootRoute = createRootRoute({
    component: () => (
      <>
        <Outlet />
        <Toaster />
      </>
    ),
  });
  const stub = (p: string) =>
    createRoute({
      getParentRoute: () => rootRoute,
      path: p,
      component: () => <div data-testid="page">{p}</div>,
    });
  const screen = createRoute({ getParentRoute: () => rootRoute, path, component: ui });
  const routeTree = rootRoute.addChildren([
    screen,
    ...['/', '/login', '/register', '/reset', '/token', '/personal'].map(stub),
  ]);
  const router = createRouter({
    routeTree,
    history: createMemoryHistory({ initialEntries: [`${path}${search}`] }),
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const result = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router as never} />
    </QueryClientProvider>,
    { reactStrictMode: strictMode },
  );
  await router.load();
  return { ...result, router };
}
