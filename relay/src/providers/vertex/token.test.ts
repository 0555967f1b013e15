import { createVerify, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vertexClaudeModel, vertexRegionOf } from './provider.ts';
import { createTokenCache, readServiceAccount, type ServiceAccount, signAssertion } from './token.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
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

describe('Vertex AI service-account tokens', () => {
  it('signs an RS256 assertion for the account, its token endpoint and the cloud-platform scope', () => {
    const jwt = signAssertion(account, 1_000);
    const [head, claims, signature] = jwt.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: 'k1',
    });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: account.client_email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://token.test/token',
      iat: 1_000,
      exp: 4_600,
    });
    const verify = createVerify('RSA-SHA256');
    verify.update(`${head}.${claims}`);
    expect(verify.verify(publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
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
