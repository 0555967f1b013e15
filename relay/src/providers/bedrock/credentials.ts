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

const signers = new Map<string, SignatureV4>();

/** The signer of one access key pair and region (kept: it caches its derived signing keys). */
export function signerOf(credential: Extract<BedrockCredential, { kind: 'sigv4' }>): SignatureV4 {
  const id = `${credential.accessKeyId}\n${credential.secretAccessKey}\n${credential.region}`;
  let signer = signers.get(id);
  if (!signer) {
    if (signers.size > 1000) signers.clear();
    signer = new SignatureV4({
      service: 'bedrock',
      region: credential.region,
      credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey },
      sha256: Sha256,
    });
    signers.set(id, signer);
  }
  return signer;
}

/** The headers of a SigV4-signed POST of `body` to `url` (host, x-amz-date, x-amz-content-sha256, authorization). */
export async function signedHeaders(
  credential: Extract<BedrockCredential, { kind: 'sigv4' }>,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Record<string, string>> {
  const target = new URL(url);
  const signed = await signerOf(credential).sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    ...(target.port ? { port: Number(target.port) } : {}),
    path: target.pathname,
    query: {},
    headers: { ...headers, host: target.host },
    body,
  });
  return signed.headers;
}
