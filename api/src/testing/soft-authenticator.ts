/**
 * A software WebAuthn authenticator for API tests: a P-256 key pair that answers registration (attestation
 * format "none") and authentication ceremonies as the WebAuthn specification lays the bytes out
 * (https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data, #sctn-attested-credential-data, COSE keys per
 * RFC 9053 section 7.1, CBOR per RFC 8949). It is written from the specification, not from the server library
 * that checks its answers; the browser test (console/e2e/passkeys.e2e.test.ts) uses Chromium's own authenticator.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';

type Cbor = number | string | Uint8Array | CborMap | CborRecord;
interface CborMap extends Map<Cbor, Cbor> {}
interface CborRecord {
  [key: string]: Cbor;
}

/** The CBOR head of a major type and length (RFC 8949 section 3). */
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(n, 1);
  return b;
}

function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url');

/** Flags of authenticator data: UP (user present), UV (user verified), AT (attested credential data). */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface SoftAuthenticator {
  /** The credential id, base64url. */
  readonly credentialId: string;
  /** The COSE public key, as WebAuthn's attested credential data carries it. */
  readonly cosePublicKey: Buffer;
  /** The PKCS#8 private key, so a test can keep the same authenticator across app instances. */
  readonly privateKeyDer: Buffer;
  /** A RegistrationResponseJSON for `options` (from /api/user/passkey/register/begin). */
  register(options: { challenge: string; rp: { id?: string } }, origin: string): Record<string, unknown>;
  /** An AuthenticationResponseJSON for `options`, with the user verified unless `verified` is false. */
  assert(
    options: { challenge: string; rpId?: string },
    origin: string,
    extra?: { verified?: boolean; userHandle?: string },
  ): Record<string, unknown>;
}

export function createSoftAuthenticator(
  rpId: string,
  existing?: { credentialId: Buffer; privateKeyDer: Buffer; signCount?: number },
): SoftAuthenticator {
  const privateKey = existing
    ? createPrivateKey({ key: existing.privateKeyDer, format: 'der', type: 'pkcs8' })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const cosePublicKey = cbor(
    new Map<Cbor, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]),
  );
  const credentialId = existing?.credentialId ?? randomBytes(16);
  let signCount = existing?.signCount ?? 0;

  const authData = (flags: number, attested?: Buffer) => {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(signCount);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counter, ...(attested ? [attested] : [])]);
  };
  const clientData = (type: string, challenge: string, origin: string) =>
    Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  /** A PublicKeyCredential as WebAuthn's JSON serialisation carries it. */
  const credentialJson = (response: Record<string, unknown>) => ({
    id: b64url(credentialId),
    rawId: b64url(credentialId),
    type: 'public-key',
    clientExtensionResults: {},
    response,
  });

  return {
    credentialId: b64url(credentialId),
    cosePublicKey,
    privateKeyDer: privateKey.export({ format: 'der', type: 'pkcs8' }) as Buffer,
    register(options, origin) {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(credentialId.length);
      const attested = Buffer.concat([Buffer.alloc(16), length, credentialId, cosePublicKey]);
      const attestationObject = cbor({
        fmt: 'none',
        attStmt: {},
        authData: authData(UP | UV | AT, attested),
      });
      return credentialJson({
        clientDataJSON: b64url(clientData('webauthn.create', options.challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      });
    },
    assert(options, origin, extra = {}) {
      signCount += 1;
      const data = authData(extra.verified === false ? UP : UP | UV);
      const client = clientData('webauthn.get', options.challenge, origin);
      const signature = sign('sha256', Buffer.concat([data, sha256(client)]), privateKey);
      return credentialJson({
        clientDataJSON: b64url(client),
        authenticatorData: b64url(data),
        signature: b64url(signature),
        ...(extra.userHandle !== undefined ? { userHandle: extra.userHandle } : {}),
      });
    },
  };
}
