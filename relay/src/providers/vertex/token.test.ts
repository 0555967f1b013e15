import { createPrivateKey, createPublicKey, createVerify, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vertexClaudeModel, vertexRegionOf } from './provider.ts';
import {
  createTokenCache,
  readServiceAccount,
  type ServiceAccount,
  signAssertion,
  signRs256,
} from './token.ts';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const account: ServiceAccount = {
  project_id: 'p',
  client_email: 'a@p.iam.gserviceaccount.com',
  private_key: privateKey,
  private_key_id: 'k1',
  token_uri: 'https://token.test/token',
};

/**
 * RFC 7515 appendix A.2 (https://www.rfc-editor.org/rfc/rfc7515#appendix-A.2): the RSA key (as a JWK), the JWS
 * signing input and the RS256 signature it gives. RSASSA-PKCS1-v1_5 is deterministic: same key, same input, same
 * bytes.
 */
const RFC7515_A2 = {
  key: {
    kty: 'RSA',
    n: 'ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ',
    e: 'AQAB',
    d: 'Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ',
    p: '4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc',
    q: 'uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc',
    dp: 'BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0',
    dq: 'h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU',
    qi: 'IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U',
  },
  signingInput:
    'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ',
  signature:
    'cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw',
} as const;

/** The A.2 key as a service account's `private_key` holds one (PKCS #8 PEM). */
const a2Pem = createPrivateKey({ key: RFC7515_A2.key, format: 'jwk' })
  .export({ type: 'pkcs8', format: 'pem' })
  .toString();

describe('Vertex AI service-account tokens', () => {
  it("signs RS256 as RFC 7515 A.2 does: the appendix's key and signing input give its signature, byte for byte", () => {
    expect(signRs256(RFC7515_A2.signingInput, a2Pem)).toBe(RFC7515_A2.signature);
  });

  it("writes the assertion Google's service-account guide describes, signed with the account's key", () => {
    // https://developers.google.com/identity/protocols/oauth2/service-account#jwt-auth: the header
    // {"alg":"RS256","typ":"JWT"}; the claim set's example (iss = the account's email, aud = the token endpoint,
    // exp one hour after iat) with the scope Vertex AI needs, cloud-platform.
    const jwt = signAssertion(
      {
        project_id: 'p',
        client_email: '761326798069-r5mljlln1rd4lrbhg75efgigp36m78j5@developer.gserviceaccount.com',
        private_key: a2Pem,
      },
      1328550785,
    );
    const [head, claims, signature] = jwt.split('.') as [string, string, string];
    expect(Buffer.from(head, 'base64url').toString()).toBe('{"alg":"RS256","typ":"JWT"}');
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: '761326798069-r5mljlln1rd4lrbhg75efgigp36m78j5@developer.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://oauth2.googleapis.com/token',
      exp: 1328554385,
      iat: 1328550785,
    });
    const verify = createVerify('RSA-SHA256');
    verify.update(`${head}.${claims}`);
    const publicKey = createPublicKey({
      key: { kty: 'RSA', n: RFC7515_A2.key.n, e: RFC7515_A2.key.e },
      format: 'jwk',
    });
    expect(verify.verify(publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  });

  it("names the account's key id and its own token endpoint when the key document has them", () => {
    const jwt = signAssertion(account, 1_000);
    const [head, claims] = jwt.split('.') as [string, string];
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: 'k1',
    });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toMatchObject({
      aud: 'https://token.test/token',
      iat: 1_000,
      exp: 4_600,
    });
  });

  it('exchanges once under concurrency, keeps the token until five minutes before expiry, then renews', async () => {
    let now = 0;
    let posts = 0;
    const cache = createTokenCache({
      now: () => now,
      post: async (url, form) => {
        posts += 1;
        expect(url).toBe('https://token.test/token');
        expect(new URLSearchParams(form).get('grant_type')).toBe(
          'urn:ietf:params:oauth:grant-type:jwt-bearer',
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { status: 200, text: JSON.stringify({ access_token: `t${posts}`, expires_in: 3600 }) };
      },
    });
    expect(await Promise.all([1, 2, 3, 4].map(() => cache.tokenOf(account)))).toEqual([
      't1',
      't1',
      't1',
      't1',
    ]);
    now = 3600_000 - 5 * 60_000 - 1;
    expect(await cache.tokenOf(account)).toBe('t1');
    now += 2;
    expect(await cache.tokenOf(account)).toBe('t2');
    expect(cache.exchanges()).toBe(2);
  });

  it('does not keep a refused exchange: the next call tries again', async () => {
    let answer = { status: 400, text: JSON.stringify({ error: 'invalid_grant', error_description: 'bad' }) };
    const cache = createTokenCache({ post: async () => answer });
    await expect(cache.tokenOf(account)).rejects.toThrow(/token exchange failed: bad/);
    answer = { status: 200, text: JSON.stringify({ access_token: 'ok', expires_in: 3600 }) };
    expect(await cache.tokenOf(account)).toBe('ok');
  });

  it('reads the key document, the region of a model and Vertex names of Claude models', () => {
    expect(readServiceAccount('not json')).toMatch(/not a service-account JSON/);
    expect(readServiceAccount('{"project_id":"p","client_email":"e"}')).toMatch(/no private_key/);
    expect(vertexRegionOf('us-east5', 'm')).toBe('us-east5');
    expect(vertexRegionOf('{"default":"us-central1","claude-x":"europe-west1"}', 'claude-x')).toBe(
      'europe-west1',
    );
    expect(vertexRegionOf('{"default":"us-central1"}', 'gemini')).toBe('us-central1');
    expect(vertexRegionOf('', 'm')).toBeUndefined();
    expect(vertexClaudeModel('claude-3-5-haiku-20241022')).toBe('claude-3-5-haiku@20241022');
    expect(vertexClaudeModel('claude-3-5-sonnet-20241022')).toBe('claude-3-5-sonnet-v2@20241022');
    expect(vertexClaudeModel('claude-sonnet-4@20250514')).toBe('claude-sonnet-4@20250514');
  });
});
