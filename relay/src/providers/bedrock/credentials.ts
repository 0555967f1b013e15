/**
 * Bedrock's credentials (https://docs.aws.amazon.com/bedrock/latest/userguide/api-setup.html): an access key pair
 * and its region (`AccessKey|SecretKey|Region`), signed into every request with SigV4 by AWS's own signer
 * (`@smithy/signature-v4`, SHA-256 from `@aws-crypto/sha256-js`); or a Bedrock API key (`APIKey|Region`, or the
 * key alone with the region in `other`) sent as a bearer token.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

export type BedrockCredential =
  | {
      readonly kind: 'sigv4';
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
      readonly region: string;
    }
  | { readonly kind: 'api-key'; readonly apiKey: string; readonly region: string };

const DEFAULT_REGION = 'us-east-1';

/** The credential of a channel key (and its `other`, the region of an API key given alone). */
export function readBedrockKey(key: string, other: string): BedrockCredential | string {
  const parts = key.split('|').map((part) => part.trim());
  if (parts.length === 3) {
    const [accessKeyId, secretAccessKey, region] = parts as [string, string, string];
    if (!accessKeyId || !secretAccessKey || !region)
      return 'the Bedrock key must be AccessKey|SecretKey|Region';
    return { kind: 'sigv4', accessKeyId, secretAccessKey, region };
  }
  if (parts.length <= 2 && parts[0]) {
    const region = parts[1] || other.trim() || DEFAULT_REGION;
    return { kind: 'api-key', apiKey: parts[0], region };
  }
  return 'the Bedrock key must be AccessKey|SecretKey|Region or a Bedrock API key';
}

type SigV4Credential = Extract<BedrockCredential, { kind: 'sigv4' }>;

/** What a signature is made for: the service (Bedrock's is `bedrock`) and whether the body's hash goes as a header. */
export interface SigningScope {
  readonly service: string;
  /** Send and sign `x-amz-content-sha256` (AWS's SDKs do; SigV4 itself does not require it). */
  readonly hashHeader: boolean;
}

const BEDROCK_SCOPE: SigningScope = { service: 'bedrock', hashHeader: true };

const signers = new Map<string, SignatureV4>();

/** The signer of one access key pair, region and scope (kept: it caches its derived signing keys). */
function signerOf(credential: SigV4Credential, scope: SigningScope): SignatureV4 {
  const id = `${credential.accessKeyId}\n${credential.secretAccessKey}\n${credential.region}\n${scope.service}\n${scope.hashHeader}`;
  let signer = signers.get(id);
  if (!signer) {
    if (signers.size > 1000) signers.clear();
    signer = new SignatureV4({
      service: scope.service,
      region: credential.region,
      credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey },
      sha256: Sha256,
      applyChecksum: scope.hashHeader,
    });
    signers.set(id, signer);
  }
  return signer;
}

/** One request to sign: its method, its URL as sent (path and query), its headers and its body. */
export interface SignableRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The headers of `request` signed with SigV4 (host, x-amz-date, the hash header if the scope sends it,
 * authorization), at `signingDate` (now by default). The path is signed as it goes on the wire; AWS escapes it once
 * more in the canonical request, as its SDKs do for every service but S3.
 */
export async function signRequest(
  credential: SigV4Credential,
  request: SignableRequest,
  scope: SigningScope = BEDROCK_SCOPE,
  signingDate?: Date,
): Promise<Record<string, string>> {
  const target = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of target.searchParams) {
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const signed = await signerOf(credential, scope).sign(
    {
      method: request.method,
      protocol: target.protocol,
      hostname: target.hostname,
      ...(target.port ? { port: Number(target.port) } : {}),
      path: target.pathname,
      query,
      headers: { ...request.headers, host: target.host },
      body: request.body,
    },
    signingDate ? { signingDate } : {},
  );
  return signed.headers;
}

/** The headers of a SigV4-signed Bedrock POST of `body` to `url` (host, x-amz-date, x-amz-content-sha256, authorization). */
export const signedHeaders = (
  credential: SigV4Credential,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Record<string, string>> => signRequest(credential, { method: 'POST', url, headers, body });
