/**
 * Google service-account credentials (https://developers.google.com/identity/protocols/oauth2/service-account#httprest):
 * an RS256 JWT signed with the account's private key (node:crypto) is exchanged at the account's `token_uri` for an
 * access token, which is cached until shortly before it expires. Concurrent requests of one channel share one
 * exchange; a failed exchange is not cached.
 */
import { createHash, createSign } from 'node:crypto';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** A token is renewed this long before its expiry, so none expires in flight. */
const RENEW_BEFORE_MS = 5 * 60_000;

/** The fields of a service-account key the relay uses. */
export interface ServiceAccount {
  readonly project_id: string;
  readonly client_email: string;
  readonly private_key: string;
  readonly private_key_id?: string;
  readonly token_uri?: string;
}

/** The service account of a channel key, or an error message saying what is missing. */
export function readServiceAccount(key: string): ServiceAccount | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    return 'the Vertex AI key is not a service-account JSON document';
  }
  if (typeof parsed !== 'object' || parsed === null) return 'the Vertex AI key is not a JSON object';
  const account = parsed as Record<string, unknown>;
  for (const field of ['project_id', 'client_email', 'private_key'])
    if (typeof account[field] !== 'string' || account[field] === '')
      return `the Vertex AI service account has no ${field}`;
  return account as unknown as ServiceAccount;
}

/** The signed JWT assertion of `account` for its token endpoint (valid one hour). */
export function signAssertion(account: ServiceAccount, nowSeconds: number): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({
    alg: 'RS256',
    typ: 'JWT',
    ...(account.private_key_id ? { kid: account.private_key_id } : {}),
  });
  const claims = encode({
    iss: account.client_email,
    scope: SCOPE,
    aud: account.token_uri || DEFAULT_TOKEN_URI,
    iat: nowSeconds,
    exp: nowSeconds + 3600,
  });
  return `${header}.${claims}.${signRs256(`${header}.${claims}`, account.private_key)}`;
}

/** The RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3) signature of a JWS signing input, base64url. */
export function signRs256(signingInput: string, privateKeyPem: string): string {
  const signer = createSign('RSA-SHA256');
  signer.update(signingInput);
  return signer.sign(privateKeyPem, 'base64url');
}

/** Thrown when the token endpoint refuses: the channel's credential is unusable. */
export class TokenExchangeError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface TokenCache {
  /** An access token for the account, exchanged at most once at a time per account. */
  tokenOf(account: ServiceAccount): Promise<string>;
  /** Token exchanges made (tests). */
  readonly exchanges: () => number;
}

export function createTokenCache(
  options: {
    readonly now?: () => number;
    readonly post?: (url: string, form: string) => Promise<{ status: number; text: string }>;
  } = {},
): TokenCache {
  const now = options.now ?? Date.now;
  const post =
    options.post ??
    (async (url: string, form: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
        signal: AbortSignal.timeout(30_000),
      });
      return { status: response.status, text: await response.text() };
    });
  const cached = new Map<string, { token: string; renewAt: number }>();
  const inFlight = new Map<string, Promise<string>>();
  let exchanges = 0;

  async function exchange(id: string, account: ServiceAccount): Promise<string> {
    exchanges += 1;
    const assertion = signAssertion(account, Math.floor(now() / 1000));
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
    }).toString();
    const { status, text } = await post(account.token_uri || DEFAULT_TOKEN_URI, form);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = {};
    }
    if (status !== 200 || typeof body.access_token !== 'string') {
      const reason = typeof body.error_description === 'string' ? body.error_description : `status ${status}`;
      throw new TokenExchangeError(
        status === 200 ? 502 : status,
        `the service-account token exchange failed: ${reason}`,
      );
    }
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    cached.set(id, { token: body.access_token, renewAt: now() + seconds * 1000 - RENEW_BEFORE_MS });
    return body.access_token;
  }

  return {
    tokenOf(account) {
      const id = createHash('sha256').update(`${account.client_email}\n${account.private_key}`).digest('hex');
      const hit = cached.get(id);
      if (hit && now() < hit.renewAt) return Promise.resolve(hit.token);
      let pending = inFlight.get(id);
      if (!pending) {
        pending = exchange(id, account).finally(() => inFlight.delete(id));
        inFlight.set(id, pending);
      }
      return pending;
    },
    exchanges: () => exchanges,
  };
}
