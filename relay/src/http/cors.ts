/**
 * Cross-origin access to the model routes (`/v1/*`, `/dashboard/billing/*`), as the reference allows it: any origin,
 * any method and header. Browser chat clients (web apps that keep the user's key in the browser) call the gateway
 * from their own origin; without these headers the browser hides every answer from them. The console's own routes
 * (`/api`, and `/pg` with its session cookie) stay same-origin.
 *
 * The caller's origin is echoed (with `Vary: Origin`) rather than `*`, so a client that sends credentials is served
 * too; the request id, the charged quota and the tools left out (docs/adr/0029) are exposed so such a client can
 * read them.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Whether a path is one of the model routes that answer other origins. */
export const isCrossOriginPath = (url: string): boolean =>
  url.startsWith('/v1/') || url.startsWith('/dashboard/');

const EXPOSED = 'x-request-id, x-turnpike-quota, x-turnpike-dropped-tools, retry-after';
const METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/** Headers for an answer to a cross-origin request, or undefined when the request names no origin. */
export function corsHeaders(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': EXPOSED,
    vary: 'Origin',
  };
}

/** Headers of the answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`). */
export function preflightHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const asked = headers['access-control-request-headers'];
  return {
    ...corsHeaders(headers),
    'access-control-allow-methods': METHODS,
    'access-control-allow-headers': typeof asked === 'string' && asked !== '' ? asked : '*',
    'access-control-max-age': '43200',
  };
}
