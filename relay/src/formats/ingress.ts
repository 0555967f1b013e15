/**
 * What every client format's ingress shares: the caller's key in a `Bearer` header and a message naming the request
 * id. An ingress itself (the client side of the provider seam) is the contract's `Ingress`; which one a call uses is
 * decided once, at the door (../http/protocol.ts).
 */
/** `Bearer <key>` → key. */
export function bearerKey(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim().replace(/^bearer\s+/i, '');
  return value === '' ? undefined : value;
}

/** A message with the request id, so a user can quote it to an operator. */
export const withRequestId = (message: string, requestId: string): string =>
  requestId ? `${message} (request id: ${requestId})` : message;
