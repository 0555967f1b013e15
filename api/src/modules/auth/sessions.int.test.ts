import { hashPassword } from '@turnpike/core/crypto/password';
import { users } from '@turnpike/core/db/schema/index';
import { createSessionCodec, type SessionData } from '@turnpike/core/sessions/session-codec';
import { endSession, MAX_ENDED_SESSIONS, newSessionId } from '@turnpike/core/sessions/session-end';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  createTestDatabaseUrl,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

/**
 * Sessions that end (issue 16, docs/adr/0020); the playground's side (ROLE=all) is server/src/playground-sessions.int.test.ts. With TEST_POSTGRES_URL the console API runs as two processes on one
 * database, and every session is made on one and checked on the other; on PGlite both are the one process.
 */
const twoProcesses = Boolean(process.env.TEST_POSTGRES_URL);
const ENV = { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' };
const SESSION_ENDED = /your session has ended/;

describe(`sessions that end (${twoProcesses ? 'two processes on one Postgres' : 'one process on PGlite'})`, () => {
  let a: TestApp;
  let b: TestApp;
  let drop: () => Promise<void> = async () => {};
  let root: ConsoleClient;
  let sequence = 0;

  beforeAll(async () => {
    if (twoProcesses) {
      const database = await createTestDatabaseUrl();
      drop = database.drop;
      const prefix = `turnpike-test:sessions-${Date.now()}:`;
      a = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix, env: ENV });
      b = await createTestApp({ databaseUrl: database.url!, redisKeyPrefix: prefix, env: ENV });
    } else {
      a = await createTestApp({ env: ENV });
      b = a;
    }
    root = await setupRoot(a.app);
  });
  afterAll(async () => {
    if (b !== a) await b.close();
    await a.close();
    await drop();
  });

  /** A fresh user signed in on process A; its password is `pass-<name>-1`. */
  async function newUser(): Promise<{ name: string; password: string; client: ConsoleClient }> {
    sequence += 1;
    const name = `ses${sequence}`;
    const password = `pass-${name}-1`;
    return { name, password, client: await registerUser(a.app, name, password) };
  }

  /** Another sign-in of the same user, on `app`. */
  async function signIn(app: FastifyInstance, name: string, password: string): Promise<ConsoleClient> {
    const client = new ConsoleClient(app);
    const login = await client.login(name, password);
    if (!login.json().success) throw new Error(`login failed: ${login.body}`);
    return client;
  }

  /** A saved copy of a client's cookie, used from `app` (what someone who copied the cookie holds). */
  function savedCopy(client: ConsoleClient, app: FastifyInstance): ConsoleClient {
    const copy = new ConsoleClient(app);
    copy.cookie = client.cookie;
    copy.userId = client.userId;
    return copy;
  }

  async function expectEnded(client: ConsoleClient) {
    const self = await client.get('/api/user/self');
    expect(self.statusCode).toBe(401);
    expect(self.json()).toMatchObject({ success: false, message: expect.stringMatching(SESSION_ENDED) });
  }

  async function expectLive(client: ConsoleClient) {
    const self = await client.get('/api/user/self');
    expect(self.statusCode, self.body).toBe(200);
  }

  async function rowOf(id: number) {
    const [row] = await a.runtime.deps.db.select().from(users).where(eq(users.id, id));
    return row!;
  }

  it("ends a signed-out session on every process, and only that one of the user's sessions", async () => {
    const { name, password, client: first } = await newUser();
    const second = await signIn(b.app, name, password);
    const savedOnA = savedCopy(first, a.app);
    const savedOnB = savedCopy(first, b.app);
    await expectLive(savedOnB);

    const logout = await first.get('/api/user/logout');
    expect(logout.json()).toMatchObject({ success: true });
    expect(first.cookie).toBe('');
    await expectEnded(savedOnA);
    await expectEnded(savedOnB);
    await expectLive(second);
    await expectLive(savedCopy(second, a.app));
    // Signing out again with the ended cookie changes nothing for the others.
    await savedOnB.get('/api/user/logout');
    await expectLive(second);
    // And the user signs in again as usual.
    await expectLive(await signIn(b.app, name, password));
  });

  it('ends the other sessions on a password change and keeps the one that made it', async () => {
    const { name, password, client: changer } = await newUser();
    const other = await signIn(b.app, name, password);
    const before = savedCopy(changer, b.app);
    const changed = await changer.put('/api/user/self', {
      password: 'new-pass-word-1',
      original_password: password,
    });
    expect(changed.json()).toMatchObject({ success: true });
    await expectLive(changer);
    await expectLive(savedCopy(changer, b.app));
    await expectEnded(other);
    await expectEnded(savedCopy(other, a.app));
    // The cookie as it was before the change is the old session's: ended too.
    await expectEnded(before);
    expect((await new ConsoleClient(b.app).login(name, password)).json().success).toBe(false);
    await expectLive(await signIn(b.app, name, 'new-pass-word-1'));
  });

  it("ends all of the user's sessions when an administrator disables, promotes, demotes or deletes them", async () => {
    const { name, password, client: onA } = await newUser();
    const id = onA.userId!;
    const onB = await signIn(b.app, name, password);
    const manage = async (action: string) =>
      expect((await root.post('/api/user/manage', { id, action })).json()).toMatchObject({ success: true });

    await manage('disable');
    expect((await onB.get('/api/user/self')).json().message).toBe('this user has been disabled');
    await manage('enable');
    // Enabled again, the sessions from before the disable stay ended.
    await expectEnded(onA);
    await expectEnded(onB);

    const beforePromotion = await signIn(b.app, name, password);
    await manage('promote');
    await expectEnded(beforePromotion);
    const asAdmin = await signIn(a.app, name, password);
    expect((await asAdmin.get('/api/user/')).statusCode).toBe(200);
    await manage('demote');
    await expectEnded(asAdmin);
    expect((await savedCopy(asAdmin, b.app).get('/api/user/')).statusCode).toBe(401);

    const beforeDeletion = await signIn(b.app, name, password);
    await manage('delete');
    expect((await beforeDeletion.get('/api/user/self')).statusCode).toBe(401);
    expect((await savedCopy(beforeDeletion, a.app).get('/api/user/self')).statusCode).toBe(401);
  });

  it('ends the sessions of a user whose password an administrator sets, and keeps root signed in on its own', async () => {
    const { name, password, client } = await newUser();
    const onB = await signIn(b.app, name, password);
    const saved = await root.put('/api/user/', { id: client.userId, password: 'set-by-admin-1' });
    expect(saved.json()).toMatchObject({ success: true });
    await expectEnded(client);
    await expectEnded(onB);
    await expectLive(await signIn(b.app, name, 'set-by-admin-1'));

    // Root changing its own password through the edit sheet keeps this session; another root session ends.
    const otherRoot = await signIn(b.app, 'root', 'root-password-1');
    const own = await root.put('/api/user/', { id: root.userId, password: 'root-password-2' });
    expect(own.json()).toMatchObject({ success: true });
    await expectLive(root);
    await expectEnded(otherRoot);
    const back = await root.put('/api/user/', { id: root.userId, password: 'root-password-1' });
    expect(back.json()).toMatchObject({ success: true });
    await expectLive(root);
  });

  it('ends the sessions whatever path changes the password (a reset, or SQL by an operator)', async () => {
    const { name, password, client } = await newUser();
    const onB = await signIn(b.app, name, password);
    await a.runtime.deps.db
      .update(users)
      .set({ password: await hashPassword('reset-pass-1') })
      .where(eq(users.id, client.userId!));
    await expectEnded(client);
    await expectEnded(onB);
    // Writes that change none of password, role, status or deletion end nothing.
    const fresh = await signIn(b.app, name, 'reset-pass-1');
    await a.runtime.deps.db
      .update(users)
      .set({ quota: 123, displayName: 'x' })
      .where(eq(users.id, client.userId!));
    await expectLive(fresh);
  });

  it('cannot refresh an ended session into a longer one: a rewrite keeps its expiry', async () => {
    const { client } = await newUser();
    const codec = createSessionCodec(a.config.sessionSecret);
    const cookieValue = (c: ConsoleClient) => decodeURIComponent(c.cookie.replace(/^session=/, ''));
    const session = codec.decode(cookieValue(client));
    expect(session.sid).toEqual(expect.any(String));
    // A later rewrite of the same session (the human check, a third-party state) keeps the original expiry.
    const rewritten = codec.decode(codec.encode({ ...session, turnstile: true }));
    expect(rewritten.exp).toBe(session.exp);
    await client.get('/api/user/logout');
    const row = await rowOf(session.uid!);
    expect(row.endedSessions).toEqual([[session.sid, session.exp]]);
  });

  it('signs out a cookie from before session ids by ending all of that user’s sessions', async () => {
    const { name, password, client } = await newUser();
    const codec = createSessionCodec(a.config.sessionSecret);
    const legacy = new ConsoleClient(b.app);
    legacy.userId = client.userId;
    legacy.cookie = `session=${encodeURIComponent(codec.encode({ uid: client.userId!, iat: 1 }))}`;
    await expectLive(legacy);
    const other = await signIn(a.app, name, password);
    const legacySaved = savedCopy(legacy, a.app);
    await legacy.get('/api/user/logout');
    await expectEnded(legacySaved);
    await expectEnded(other);
    await expectEnded(client);
  });

  it(`keeps at most ${MAX_ENDED_SESSIONS} ended sessions per user; one more sign-out ends them all`, async () => {
    const { name, password, client } = await newUser();
    const uid = client.userId!;
    const now = Math.floor(Date.now() / 1000);
    const session = (exp = now + 3600): SessionData => ({ uid, sid: newSessionId(), gen: 0, exp });
    for (let i = 1; i < MAX_ENDED_SESSIONS; i++) await endSession(a.runtime.deps.db, session());
    await endSession(a.runtime.deps.db, session(now + 60));
    expect((await rowOf(uid)).endedSessions).toHaveLength(MAX_ENDED_SESSIONS);
    // Two minutes on, the entry past its expiry is dropped, not counted: room for one more.
    await endSession(a.runtime.deps.db, session(), now + 120);
    expect(await rowOf(uid)).toMatchObject({ sessionGeneration: 0 });
    expect((await rowOf(uid)).endedSessions).toHaveLength(MAX_ENDED_SESSIONS);
    const live = await signIn(b.app, name, password);
    await expectLive(live);
    await endSession(a.runtime.deps.db, session());
    const row = await rowOf(uid);
    expect(row).toMatchObject({ sessionGeneration: 1, endedSessions: [] });
    await expectEnded(live);
    await expectLive(await signIn(b.app, name, password));
  });
});
