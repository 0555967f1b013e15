/**
 * Whether an error means the database cannot be reached right now (it is down, restarting, failing over, or the
 * network to it is cut), as opposed to a query that is wrong. Such an error is an outage to ride through: the
 * console API answers 503 with `Retry-After`, a process starting waits for the database, a background task
 * tries again later. Drizzle wraps driver errors (`DrizzleQueryError`), so the `cause` chain is searched.
 */

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  // A Service name that does not resolve yet (a database pod being replaced, a DNS hiccup).
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01 admin shutdown (also what
 * `pg_terminate_backend` sends), 57P02 crash shutdown, 57P03 cannot connect now (starting up, shutting down,
 * in recovery), 53300 too many connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Messages of node-postgres and pg-pool that carry no code. */
const UNREACHABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection is not queryable/i,
  /client has encountered a connection error/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

function codeOf(error: object): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function isUnreachableItself(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = codeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && UNREACHABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/** Whether `error` (or what caused it) says the database is unreachable rather than the query being wrong. */
export function isDatabaseUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (isUnreachableItself(current)) return true;
    // An HTTP call that failed (undici's "fetch failed") is a remote server's outage, not the database's.
    if (current instanceof TypeError && current.message === 'fetch failed') continue;
    if (typeof current === 'object') {
      queue.push((current as { cause?: unknown }).cause);
      // A connect to a name with several addresses fails with an AggregateError of each attempt.
      const errors = (current as { errors?: unknown }).errors;
      if (Array.isArray(errors)) queue.push(...errors);
    }
  }
  return false;
}

/** A short description of why the database is unreachable, without the query or its parameters. */
export function describeUnreachable(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    if (isUnreachableItself(current)) {
      const code = codeOf(current);
      const message = String((current as { message?: unknown }).message ?? '');
      if (message && !message.startsWith('Failed query')) return message;
      return code ?? 'unreachable';
    }
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && isDatabaseUnreachable(errors[0]))
      return describeUnreachable(errors[0]);
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}
