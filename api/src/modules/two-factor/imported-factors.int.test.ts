import { createChannelKeyBox } from '@turnpike/core/channels/channel-key';
import { importGateway } from '@turnpike/core/import/importer';
import { openSource } from '@turnpike/core/import/source';
import {
  ALICE_BACKUP_CODE,
  ALICE_PASSKEY,
  ALICE_TOTP_SECRET,
  createSqliteSource,
  PASSWORDS,
} from '@turnpike/core/import/testing/reference-source';
import { createSecondFactorKeys } from '@turnpike/core/second-factors/factor-box';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSoftAuthenticator } from '../../testing/soft-authenticator.ts';
import { ConsoleClient, createTestApp, type TestApp } from '../../testing/test-app.ts';

/**
 * Issue 43: a user who had two factors on new-api still needs them after the move. The source is new-api's SQLite
 * schema with Alice's TOTP secret, a backup code and a passkey stored the way new-api stores them
 * (core/src/import/testing/reference-source.ts); the import runs into the console API's own database.
 */
const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };
const ORIGIN = 'https://gateway.example';

describe('second factors carried from new-api', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    const source = await openSource(createSqliteSource('new-api', 'http://127.0.0.1:9/v1').url);
    try {
      await importGateway({
        source,
        db: t.runtime.deps.db,
        box: createChannelKeyBox(t.config.cryptoSecret),
        secondFactorKeys: createSecondFactorKeys(t.config.cryptoSecret),
        dryRun: false,
        merge: false,
        skipLogs: true,
      });
    } finally {
      await source.close();
    }
    await t.runtime.deps.options.set('ServerAddress', ORIGIN);
  });
  afterAll(() => t.close());

  const passwordStep = async (username: string, password: string) => {
    const client = new ConsoleClient(t.app);
    return { client, answer: (await client.post('/api/user/login', { username, password })).json() };
  };

  it('the password alone gives no session; the code of her authenticator app does', async () => {
    const { client, answer } = await passwordStep('alice', PASSWORDS.alice);
    expect(answer).toMatchObject({ success: true, data: { require_2fa: true, passkey: true } });
    expect(client.cookie).toBe('');
    const code = new TOTP({ secret: Secret.fromBase32(ALICE_TOTP_SECRET) }).generate();
    const done = await client.post('/api/user/login/2fa', { code, flow_token: answer.data.flow_token });
    expect(done.json()).toMatchObject({ success: true, data: { username: 'alice' } });
    client.userId = done.json().data.id;
    expect((await client.get('/api/user/self')).statusCode).toBe(200);
  });

  it('her unused backup code works once; the one she used on new-api does not', async () => {
    const first = await passwordStep('alice', PASSWORDS.alice);
    const spent = await first.client.post('/api/user/login/2fa', {
      code: 'ABCD-1234',
      flow_token: first.answer.data.flow_token,
    });
    expect(spent.json().success).toBe(false);
    const done = await first.client.post('/api/user/login/2fa', {
      code: ALICE_BACKUP_CODE,
      flow_token: first.answer.data.flow_token,
    });
    expect(done.json()).toMatchObject({ success: true, data: { username: 'alice' } });
    const again = await passwordStep('alice', PASSWORDS.alice);
    const reused = await again.client.post('/api/user/login/2fa', {
      code: ALICE_BACKUP_CODE,
      flow_token: again.answer.data.flow_token,
    });
    expect(reused.json().success).toBe(false);
  });

  it('her passkey signs her in, answering with the user handle new-api gave it', async () => {
    const authenticator = createSoftAuthenticator(new URL(ORIGIN).hostname, {
      credentialId: Buffer.from(ALICE_PASSKEY.credentialIdBase64, 'base64'),
      privateKeyDer: Buffer.from(ALICE_PASSKEY.privateKeyPkcs8Base64, 'base64'),
      signCount: ALICE_PASSKEY.signCount,
    });
    const client = new ConsoleClient(t.app);
    const options = (await client.post('/api/user/passkey/login/begin')).json().data.options;
    const finish = await client.post('/api/user/passkey/login/finish', {
      ...authenticator.assert(options, ORIGIN, { userHandle: Buffer.from('2').toString('base64url') }),
    });
    expect(finish.json(), finish.body).toMatchObject({ success: true, data: { username: 'alice' } });
  });

  it('a user who had no second factor signs in with the password as before', async () => {
    const { answer } = await passwordStep('root', PASSWORDS.root);
    expect(answer).toMatchObject({ success: true, data: { username: 'root' } });
    expect(answer.data.require_2fa).toBeUndefined();
  });
});
