import i18next from 'i18next';
import { getSessionUser, setSessionUser } from './session.ts';
import { toast } from './toast.ts';

/** The console API envelope (spec 01 section 8). */
export interface Envelope<T> {
  success: boolean;
  message?: string;
  data?: T;
  code?: string;
}

/** A failed request: `message` is already the text shown to the user. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(message: string, status: number, code?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  /** Do not show a toast on failure (the caller shows the message inline). */
  silent?: boolean;
  signal?: AbortSignal;
}

/** Where a 401 sends the browser; replaced in tests. */
let redirectToLogin = (): void => {
  if (typeof window === 'undefined') return;
  if (window.location.pathname === '/login') return;
  window.location.assign('/login?expired=true');
};
export function setLoginRedirect(fn: () => void): void {
  redirectToLogin = fn;
}

/** An administrator the site requires to enrol in two-factor sign-in first (docs/adr/0044) goes there. */
function redirectToEnrolment(): void {
  if (typeof window === 'undefined' || window.location.pathname === '/two-factor') return;
  window.location.assign('/two-factor');
}

function buildUrl(path: string, query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

/** The message the error catalogue gives for an HTTP status, if it has one. */
export function messageForStatus(status: number): string | null {
  if (status === 429) return i18next.t('error.tooManyRequests');
  if (status === 500) return i18next.t('error.serverError');
  if (status === 405) return i18next.t('error.demoSite');
  return null;
}

/**
 * The codes of the API envelope (core/src/errors.ts) the console says in the reader's language. The server's
 * message stays English for API clients and is passed as `detail`: the English console shows it as it is, the
 * Chinese one after a Chinese sentence, so what was wrong (which field, which resource) is not lost.
 */
export const TRANSLATED_ERROR_CODES = [
  'VALIDATION_FAILED',
  'BAD_REQUEST',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'MANAGED_BY_KUBERNETES',
  'INSUFFICIENT_QUOTA',
  'FEATURE_DISABLED',
  'USER_DISABLED',
  'INVALID_CREDENTIALS',
  'DATABASE_UNAVAILABLE',
] as const;

/** The message the error catalogue gives for a refusal's code, or null for a code it does not know. */
export function messageForCode(code: string | undefined, serverMessage: string | undefined): string | null {
  if (!code || !(TRANSLATED_ERROR_CODES as readonly string[]).includes(code) || !serverMessage) return null;
  return i18next.t(`error.code.${code}`, { detail: serverMessage });
}

/**
 * Sends a request to the console API and unwraps the envelope. The `New-Api-User` header carries the stored
 * user's id. A failure throws ApiError and, unless `silent`, shows the message as an error toast.
 */
export async function request<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  return (await requestEnvelope<T>(method, path, options)).data as T;
}

/**
 * Like {@link request}, but answers the whole successful envelope, for the few calls that put fields beside
 * `data` (the payment form's `url`). `E` names those extra fields.
 */
export async function requestEnvelope<T = unknown, E extends object = object>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Envelope<T> & Partial<E>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const user = getSessionUser();
  if (user) headers['New-Api-User'] = String(user.id);
  const hasBody = options.body !== undefined;
  if (hasBody) headers['Content-Type'] = 'application/json';

  const fail = (message: string, status: number, code?: string): never => {
    if (!options.silent) toast.error(message);
    throw new ApiError(message, status, code);
  };

  let response: Response;
  try {
    response = await fetch(buildUrl(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      ...(hasBody ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return fail(i18next.t('error.requestFailed', { message: reason }), 0);
  }

  if (response.status === 401) {
    setSessionUser(null);
    redirectToLogin();
    return fail(i18next.t('error.sessionExpired'), 401, 'UNAUTHENTICATED');
  }

  let envelope: (Envelope<T> & Partial<E>) | null = null;
  try {
    envelope = (await response.json()) as Envelope<T> & Partial<E>;
  } catch {
    envelope = null;
  }
  const byStatus = messageForStatus(response.status);
  if (byStatus) return fail(byStatus, response.status, envelope?.code);
  if (!envelope || typeof envelope !== 'object') {
    return fail(i18next.t('error.requestFailed', { message: `HTTP ${response.status}` }), response.status);
  }
  if (!envelope.success) {
    if (envelope.code === 'SECOND_FACTOR_REQUIRED') redirectToEnrolment();
    return fail(
      messageForCode(envelope.code, envelope.message) ||
        envelope.message ||
        i18next.t('error.requestFailed', { message: `HTTP ${response.status}` }),
      response.status,
      envelope.code,
    );
  }
  return envelope;
}

/** Shorthands for the common methods. */
export const api = {
  get: <T>(path: string, options?: RequestOptions) => request<T>('GET', path, options),
  post: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('POST', path, { ...options, body }),
  put: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('PUT', path, { ...options, body }),
  delete: <T>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options),
};
