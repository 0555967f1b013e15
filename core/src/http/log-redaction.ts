/**
 * What no log line may carry, for every role's logger: credentials in request headers (each client protocol's
 * own header), cookies both ways, secrets in logged objects, and a key in the query string (Gemini clients send
 * `?key=`). One list, so a header added for one role is hidden in all of them.
 */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-goog-api-key"]',
  'req.headers["api-key"]',
  'req.headers["mj-api-secret"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  // `*.x` reaches one level down only: the top-level names are listed as well.
  'password',
  'key',
  'authorization',
  '*.password',
  '*.key',
  '*.authorization',
];

const SECRET_QUERY = /([?&](?:key|api[-_]key|access_token|token)=)[^&#]*/gi;

/** `url` with the value of every credential-bearing query parameter replaced. */
const withoutSecretQuery = (url: string): string => url.replace(SECRET_QUERY, '$1[redacted]');

interface LoggedRequest {
  method: string;
  url: string;
  hostname?: string;
  ip?: string;
  id?: string;
}

/** Fastify's request serializer, with the query's secrets hidden. */
const requestSerializer = (request: LoggedRequest) => ({
  method: request.method,
  url: withoutSecretQuery(request.url),
  host: request.hostname,
  remoteAddress: request.ip,
});

/** The options every role's Fastify logger starts from (the caller's own options win). */
export function loggerOptions(options: true | Record<string, unknown>): Record<string, unknown> {
  return {
    redact: LOG_REDACT_PATHS,
    serializers: { req: requestSerializer },
    ...(options === true ? {} : options),
  };
}
