import { logs, users } from '@turnpike/core/db/schema/index';
import { LogType } from '@turnpike/core/domain/logs';
import { Role, UserStatus } from '@turnpike/core/domain/users';
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleClient,
  createTestApp,
  ROOT,
  registerUser,
  setupRoot,
  type TestApp,
} from '../../testing/test-app.ts';

const PASSWORD = 'member-pass-1';

describe('admin user management', () => {
  let t: TestApp;
  let root: ConsoleClient;

  /** Creates a user through the admin API (root), optionally promotes it, and signs it in. */
  async function makeUser(username: string, role: number = Role.User): Promise<ConsoleClient> {
    const created = await root.post('/api/user/', { username, password: PASSWORD });
    if (!created.json().success) throw new Error(`create failed: ${created.body}`);
    if (role >= Role.Admin) {
      const promoted = await root.post('/api/user/manage', { id: created.json().data.id, action: 'promote' });
      if (!promoted.json().success) throw new Error(`promote failed: ${promoted.body}`);
    }
    const client = new ConsoleClient(t.app);
    const login = await client.login(username, PASSWORD);
    if (!login.json().success) throw new Error(`login failed: ${login.body}`);
    return client;
  }

  async function rowOf(id: number) {
    const [row] = await t.runtime.deps.db.select().from(users).where(eq(users.id, id));
    return row!;
  }

  async function userCount(): Promise<number> {
    const [row] = await t.runtime.deps.db.select({ n: count() }).from(users);
    return Number(row!.n);
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: { CRITICAL_RATE_LIMIT: '10000', GLOBAL_API_RATE_LIMIT: '100000' },
    });
    root = await setupRoot(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('list and search', () => {
    it('lists users newest first in pages of {items,total,page,page_size}, without secrets', async () => {
      const amy = await makeUser('amy');
      await amy.get('/api/user/token'); // amy now has a system access token
      await makeUser('ben');
      await makeUser('cat');
      const first = await root.get('/api/user/?p=1&page_size=2');
      expect(first.statusCode).toBe(200);
      const data = first.json().data;
      expect(data.page).toBe(1);
      expect(data.page_size).toBe(2);
      expect(data.total).toBe(await userCount());
      expect(data.items.map((u: { username: string }) => u.username)).toEqual(['cat', 'ben']);
      const second = (await root.get('/api/user/?p=2&page_size=2')).json().data;
      expect(second.page).toBe(2);
      expect(second.items[0].username).toBe('amy');
      for (const item of [...data.items, ...second.items]) {
        expect(item).not.toHaveProperty('password');
        expect(item).not.toHaveProperty('access_token');
      }
      const amyRow = await rowOf(amy.userId!);
      expect(amyRow.accessToken).toBeTruthy();
      expect(first.body + JSON.stringify(second)).not.toContain(amyRow.accessToken!);
      expect(JSON.stringify(second)).not.toMatch(/scrypt/);
    });

    it('falls back to page 1 and 10 rows for missing or bad paging values', async () => {
      const data = (await root.get('/api/user/?p=abc&page_size=-3')).json().data;
      expect(data).toMatchObject({ page: 1, page_size: 10 });
      expect((await root.get('/api/user')).json().data.page_size).toBe(10);
    });

    it('searches by part of the username, email or display name, by id, and by group', async () => {
      const dora = await makeUser('dora');
      await root.put('/api/user/', {
        id: dora.userId,
        display_name: 'Dorothy Gale',
        email: 'dg@kansas.test',
        group: 'vip',
      });
      await makeUser('doris');
      const names = async (query: string) =>
        (await root.get(`/api/user/search?${query}`))
          .json()
          .data.items.map((u: { username: string }) => u.username);
      expect(await names('keyword=dor')).toEqual(['doris', 'dora']);
      expect(await names('keyword=GALE')).toEqual(['dora']);
      expect(await names('keyword=kansas')).toEqual(['dora']);
      expect(await names(`keyword=${dora.userId}`)).toContain('dora');
      expect(await names('group=vip')).toEqual(['dora']);
      expect(await names('keyword=doris&group=vip')).toEqual([]);
      // LIKE wildcards are matched literally, not as patterns.
      expect(await names('keyword=%25')).toEqual([]);
      expect(await names('keyword=d_ra')).toEqual([]);
      const page = (await root.get('/api/user/search?keyword=dor&p=1&page_size=1')).json().data;
      expect(page).toMatchObject({ total: 2, page: 1, page_size: 1 });
      expect(page.items).toHaveLength(1);
    });

    it('is not captured by /user/:id, and the self routes still answer', async () => {
      const admin = await makeUser('adm0', Role.Admin);
      expect((await admin.get('/api/user/search?keyword=adm0')).json().data.items[0].username).toBe('adm0');
      const self = await admin.get('/api/user/self');
      expect(self.json().data).toMatchObject({ username: 'adm0', role: Role.Admin });
      expect(typeof (await admin.get('/api/user/token')).json().data).toBe('string');
      expect(typeof (await admin.get('/api/user/aff')).json().data).toBe('string');
      expect((await admin.get('/api/user/self/groups')).json().success).toBe(true);
      expect((await admin.get('/api/user/groups')).json().success).toBe(true);
      expect((await admin.get('/api/user/models')).json().success).toBe(true);
      expect((await admin.get('/api/user/logout')).json().success).toBe(true);
      expect((await admin.get('/api/user/self')).statusCode).toBe(401);
    });
  });

  describe('get one user', () => {
    it('shows a lower-role user to an admin without password or access token', async () => {
      const admin = await makeUser('adm1', Role.Admin);
      const eve = await makeUser('eve');
      const token = (await eve.get('/api/user/token')).json().data as string;
      const got = await admin.get(`/api/user/${eve.userId}`);
      expect(got.json()).toMatchObject({ success: true, data: { id: eve.userId, username: 'eve', role: 1 } });
      expect(got.json().data).not.toHaveProperty('password');
      expect(got.json().data).not.toHaveProperty('access_token');
      expect(got.body).not.toContain(token);
    });

    it('refuses an admin reading another admin or root, and answers 404 and 400 for bad ids', async () => {
      const admin = await makeUser('adm2', Role.Admin);
      const other = await makeUser('adm3', Role.Admin);
      const peer = await admin.get(`/api/user/${other.userId}`);
      expect(peer.statusCode).toBe(403);
      expect(peer.json()).toMatchObject({
        success: false,
        message: 'you cannot act on a user of the same or a higher role',
      });
      expect((await admin.get(`/api/user/${root.userId}`)).statusCode).toBe(403);
      expect((await root.get(`/api/user/${root.userId}`)).json().data.username).toBe(ROOT.username);
      expect((await root.get('/api/user/999999')).statusCode).toBe(404);
      const bad = await root.get('/api/user/abc');
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ success: false, message: 'id must be a positive integer' });
    });
  });

  describe('create', () => {
    it('creates a user who can sign in, with the display name defaulting to the username', async () => {
      const created = await root.post('/api/user/', { username: 'fay', password: 'fay-pass-1' });
      expect(created.json()).toMatchObject({ success: true, data: { username: 'fay', role: Role.User } });
      expect(created.json().data).not.toHaveProperty('password');
      expect((await rowOf(created.json().data.id)).displayName).toBe('fay');
      expect((await new ConsoleClient(t.app).login('fay', 'fay-pass-1')).json().success).toBe(true);
      const named = await root.post('/api/user/', {
        username: 'gus',
        password: 'gus-pass-1',
        display_name: 'Gus G.',
      });
      expect(named.json().data.display_name).toBe('Gus G.');
    });

    it('refuses bad input with a clear message and creates nothing', async () => {
      const before = await userCount();
      const cases: [unknown, string][] = [
        [{ username: 'hal' }, 'username and password must not be empty'],
        [{ password: 'hal-pass-1' }, 'username and password must not be empty'],
        [{ username: '', password: '' }, 'username and password must not be empty'],
        [{ username: 'hal', password: 'short' }, 'password must be at least 8 characters'],
        [{ username: 'abcdefghijklm', password: 'hal-pass-1' }, 'username must be at most 12 characters'],
        [{ username: 'hal', password: 'hal-pass-1', role: 'x' }, 'role must be a number'],
      ];
      for (const [body, message] of cases) {
        const response = await root.post('/api/user/', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json()).toMatchObject({ success: false, message });
      }
      const duplicate = await root.post('/api/user/', { username: 'fay', password: 'other-pass-1' });
      expect(duplicate.statusCode).toBe(409);
      expect(duplicate.json()).toMatchObject({ success: false, message: 'this username is already taken' });
      expect(await userCount()).toBe(before);
    });

    it('only lets root create an administrator, and nobody create a root', async () => {
      const admin = await makeUser('adm4', Role.Admin);
      const before = await userCount();
      for (const role of [Role.Admin, Role.Root]) {
        const refused = await admin.post('/api/user/', { username: 'ivy', password: 'ivy-pass-1', role });
        expect(refused.statusCode).toBe(403);
        expect(refused.json().success).toBe(false);
      }
      expect(
        (await root.post('/api/user/', { username: 'ivy', password: 'ivy-pass-1', role: 100 })).statusCode,
      ).toBe(403);
      expect(await userCount()).toBe(before);
      const byRoot = await root.post('/api/user/', { username: 'ivy', password: 'ivy-pass-1', role: 10 });
      expect(byRoot.json().data.role).toBe(Role.Admin);
      const byAdmin = await admin.post('/api/user/', { username: 'jay', password: 'jay-pass-1' });
      expect(byAdmin.json().data.role).toBe(Role.User);
    });
  });

  describe('update', () => {
    it('edits the fields and writes a manage log when the quota changes', async () => {
      const admin = await makeUser('adm5', Role.Admin);
      const kim = await makeUser('kim');
      const saved = await admin.put('/api/user/', {
        id: kim.userId,
        username: 'kimmy',
        display_name: 'Kim K.',
        group: 'vip',
        quota: 1_500_000,
        role: 100, // ignored: the role changes only through promote/demote
      });
      expect(saved.json()).toMatchObject({
        success: true,
        data: { username: 'kimmy', display_name: 'Kim K.', group: 'vip', quota: 1_500_000, role: 1 },
      });
      const row = await rowOf(kim.userId!);
      expect(row).toMatchObject({ username: 'kimmy', group: 'vip', quota: 1_500_000, role: Role.User });
      const manageLogs = await t.runtime.deps.db
        .select()
        .from(logs)
        .where(and(eq(logs.userId, kim.userId!), eq(logs.type, LogType.Manage)));
      expect(manageLogs).toHaveLength(1);
      expect(manageLogs[0]!.content).toContain('adm5');
      expect(manageLogs[0]!.content).toContain('1500000');
      // Saving the same quota again writes no second log.
      await admin.put('/api/user/', { id: kim.userId, quota: 1_500_000, display_name: 'Kim' });
      const again = await t.runtime.deps.db
        .select()
        .from(logs)
        .where(and(eq(logs.userId, kim.userId!), eq(logs.type, LogType.Manage)));
      expect(again).toHaveLength(1);
      // The user sees the new balance on their own account.
      expect((await kim.get('/api/user/self')).json().data.quota).toBe(1_500_000);
    });

    it('sets a new password that works for sign-in', async () => {
      const leo = await makeUser('leo');
      expect(
        (await root.put('/api/user/', { id: leo.userId, password: 'leo-new-pass' })).json().success,
      ).toBe(true);
      expect((await new ConsoleClient(t.app).login('leo', PASSWORD)).json().success).toBe(false);
      expect((await new ConsoleClient(t.app).login('leo', 'leo-new-pass')).json().success).toBe(true);
    });

    it('refuses bad or forbidden edits and changes nothing', async () => {
      const admin = await makeUser('adm6', Role.Admin);
      const peer = await makeUser('adm7', Role.Admin);
      const max = await makeUser('max');
      const before = await rowOf(max.userId!);
      const cases: [unknown, number, string][] = [
        [{ id: max.userId, quota: -1 }, 400, 'quota must not be negative'],
        [{ id: max.userId, quota: 1.5 }, 400, 'quota must be an integer'],
        [{ id: max.userId, quota: '10' }, 400, 'quota must be an integer'],
        [{ id: max.userId, password: 'short' }, 400, 'password must be at least 8 characters'],
        [{ id: max.userId, email: 'nope' }, 400, 'email is not a valid address'],
        [{ quota: 5 }, 400, 'id is required'],
        [{ id: max.userId, username: 'adm6', quota: 9 }, 409, 'this username is already taken'],
        [{ id: 999999, quota: 9 }, 404, 'user not found'],
      ];
      for (const [body, status, message] of cases) {
        const response = await admin.put('/api/user/', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(status);
        expect(response.json()).toMatchObject({ success: false, message });
      }
      expect(await rowOf(max.userId!)).toEqual(before);
      const peerBefore = await rowOf(peer.userId!);
      const onPeer = await admin.put('/api/user/', { id: peer.userId, quota: 1 });
      expect(onPeer.statusCode).toBe(403);
      expect((await admin.put('/api/user/', { id: root.userId, quota: 1 })).statusCode).toBe(403);
      expect(await rowOf(peer.userId!)).toEqual(peerBefore);
    });

    it('lets root edit its own account', async () => {
      const saved = await root.put('/api/user/', { id: root.userId, display_name: 'The Root' });
      expect(saved.json()).toMatchObject({ success: true, data: { display_name: 'The Root' } });
    });
  });

  describe('manage', () => {
    it('promotes, demotes, disables and enables, answering the new role and status', async () => {
      const nia = await makeUser('nia');
      const act = (action: string) => root.post('/api/user/manage', { id: nia.userId, action });
      expect((await act('promote')).json()).toMatchObject({
        success: true,
        data: { role: Role.Admin, status: UserStatus.Enabled },
      });
      expect((await act('disable')).json().data).toEqual({ role: Role.Admin, status: UserStatus.Disabled });
      expect((await act('enable')).json().data).toEqual({ role: Role.Admin, status: UserStatus.Enabled });
      expect((await act('demote')).json().data).toEqual({ role: Role.User, status: UserStatus.Enabled });
      expect(await rowOf(nia.userId!)).toMatchObject({ role: Role.User, status: UserStatus.Enabled });
      const again = await act('demote');
      expect(again.json()).toMatchObject({ success: false, message: 'this user is already a regular user' });
    });

    it('applies the role rules: no acting on peers or root, only root promotes', async () => {
      const admin = await makeUser('adm8', Role.Admin);
      const peer = await makeUser('adm9', Role.Admin);
      const oli = await makeUser('oli');
      const refuse = async (client: ConsoleClient, id: number, action: string, message: string) => {
        const response = await client.post('/api/user/manage', { id, action });
        expect(response.statusCode, `${action} ${id}`).toBe(403);
        expect(response.json()).toMatchObject({ success: false, message });
      };
      const peerBefore = await rowOf(peer.userId!);
      const oliBefore = await rowOf(oli.userId!);
      for (const action of ['promote', 'demote', 'disable', 'enable', 'delete']) {
        await refuse(admin, peer.userId!, action, 'you cannot act on a user of the same or a higher role');
      }
      await refuse(
        admin,
        oli.userId!,
        'promote',
        'only the super administrator can promote users to administrator',
      );
      await refuse(admin, root.userId!, 'disable', 'the super administrator cannot be disabled');
      await refuse(root, root.userId!, 'disable', 'the super administrator cannot be disabled');
      await refuse(root, root.userId!, 'delete', 'the super administrator cannot be deleted');
      await refuse(root, root.userId!, 'demote', 'the super administrator cannot be demoted');
      expect((await root.delete(`/api/user/${root.userId}`)).statusCode).toBe(403);
      expect(await rowOf(peer.userId!)).toEqual(peerBefore);
      expect(await rowOf(oli.userId!)).toEqual(oliBefore);
      expect(await rowOf(root.userId!)).toMatchObject({ role: Role.Root, status: UserStatus.Enabled });
      // An admin may disable a regular user.
      expect(
        (await admin.post('/api/user/manage', { id: oli.userId, action: 'disable' })).json().data,
      ).toEqual({
        role: Role.User,
        status: UserStatus.Disabled,
      });
    });

    it('rejects unknown actions and ids with a clear message', async () => {
      const bad = await root.post('/api/user/manage', { id: root.userId, action: 'explode' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({
        success: false,
        message: 'action must be one of promote, demote, disable, enable, delete',
      });
      expect((await root.post('/api/user/manage', { action: 'disable' })).json()).toMatchObject({
        success: false,
        message: 'id is required',
      });
      expect((await root.post('/api/user/manage', { id: 999999, action: 'disable' })).statusCode).toBe(404);
    });

    it('takes rights away at once: a disabled user is locked out on the next call', async () => {
      const pam = await makeUser('pam');
      const token = (await pam.get('/api/user/token')).json().data as string;
      const byToken = new ConsoleClient(t.app);
      byToken.userId = pam.userId;
      byToken.accessToken = token;
      expect((await byToken.get('/api/user/self')).statusCode).toBe(200);
      expect((await pam.get('/api/user/self')).statusCode).toBe(200);
      await root.post('/api/user/manage', { id: pam.userId, action: 'disable' });
      for (const client of [pam, byToken]) {
        const next = await client.get('/api/user/self');
        expect(next.statusCode).toBe(403);
        expect(next.json()).toMatchObject({ success: false, message: 'this user has been disabled' });
      }
      expect((await new ConsoleClient(t.app).login('pam', PASSWORD)).json().success).toBe(false);
      await root.post('/api/user/manage', { id: pam.userId, action: 'enable' });
      // Enabled again: the access token works, the session from before the disable stays ended (ADR 0020).
      expect((await byToken.get('/api/user/self')).statusCode).toBe(200);
      expect((await pam.get('/api/user/self')).statusCode).toBe(401);
      expect((await new ConsoleClient(t.app).login('pam', PASSWORD)).json().success).toBe(true);
    });

    it('takes rights away at once: a demoted admin loses the admin screens on the next call', async () => {
      const admin = await makeUser('adm10', Role.Admin);
      const token = (await admin.get('/api/user/token')).json().data as string;
      const byToken = new ConsoleClient(t.app);
      byToken.userId = admin.userId;
      byToken.accessToken = token;
      expect((await admin.get('/api/user/')).statusCode).toBe(200);
      await root.post('/api/user/manage', { id: admin.userId, action: 'demote' });
      // The role change ends the admin's sessions (ADR 0020); the access token is held to the new role.
      const next = await admin.get('/api/user/');
      expect(next.statusCode).toBe(401);
      expect(next.json().success).toBe(false);
      expect((await byToken.get('/api/user/')).statusCode).toBe(403);
      expect(
        (await byToken.post('/api/user/', { username: 'sneak', password: 'sneak-pass' })).statusCode,
      ).toBe(403);
      expect((await byToken.get('/api/user/self')).statusCode).toBe(200);
      const again = new ConsoleClient(t.app);
      await again.login('adm10', PASSWORD);
      expect((await again.get('/api/user/')).statusCode).toBe(403);
      expect((await again.get('/api/user/self')).statusCode).toBe(200);
    });
  });

  describe('delete', () => {
    it('deregisters through manage: kept in the list as deleted, no sign-in, name not reusable', async () => {
      const quin = await makeUser('quin');
      const token = (await quin.get('/api/user/token')).json().data as string;
      const deleted = await root.post('/api/user/manage', { id: quin.userId, action: 'delete' });
      expect(deleted.json().success).toBe(true);
      const row = await rowOf(quin.userId!);
      expect(row.deletedAt).toBeInstanceOf(Date);
      expect(row.accessToken).toBeNull();
      const listed = (await root.get('/api/user/search?keyword=quin')).json().data.items;
      expect(listed).toHaveLength(1);
      expect(listed[0].DeletedAt).toEqual(expect.any(String));
      expect((await quin.get('/api/user/self')).statusCode).toBe(401);
      const byToken = new ConsoleClient(t.app);
      byToken.userId = quin.userId;
      byToken.accessToken = token;
      expect((await byToken.get('/api/user/self')).statusCode).toBe(401);
      expect((await new ConsoleClient(t.app).login('quin', PASSWORD)).json().success).toBe(false);
      const reuse = await root.post('/api/user/', { username: 'quin', password: 'quin-pass-2' });
      expect(reuse.statusCode).toBe(409);
      await expect(registerUser(t.app, 'quin', 'quin-pass-3')).rejects.toThrow(/already taken/);
      // A deregistered user takes no further actions.
      expect((await root.post('/api/user/manage', { id: quin.userId, action: 'enable' })).statusCode).toBe(
        404,
      );
      expect((await root.put('/api/user/', { id: quin.userId, quota: 5 })).statusCode).toBe(404);
    });

    it('deregisters through DELETE /api/user/:id with the same rules', async () => {
      const admin = await makeUser('adm11', Role.Admin);
      const peer = await makeUser('adm12', Role.Admin);
      const rae = await makeUser('rae');
      expect((await admin.delete(`/api/user/${peer.userId}`)).statusCode).toBe(403);
      expect((await rowOf(peer.userId!)).deletedAt).toBeNull();
      const done = await admin.delete(`/api/user/${rae.userId}`);
      expect(done.json()).toMatchObject({ success: true, message: 'user deleted' });
      expect((await rowOf(rae.userId!)).deletedAt).toBeInstanceOf(Date);
      expect((await admin.delete(`/api/user/${rae.userId}`)).statusCode).toBe(404);
      expect((await admin.delete('/api/user/0')).statusCode).toBe(400);
    });
  });

  describe('gates', () => {
    it('answers 401 to visitors and 403 to regular users on every admin user route', async () => {
      const sam = await makeUser('sam');
      const visitor = new ConsoleClient(t.app);
      const calls: [string, string, unknown?][] = [
        ['GET', '/api/user/'],
        ['GET', '/api/user/search?keyword=a'],
        ['GET', `/api/user/${root.userId}`],
        ['POST', '/api/user/', { username: 'x1', password: 'x1-pass-12' }],
        ['PUT', '/api/user/', { id: sam.userId, quota: 99 }],
        ['DELETE', `/api/user/${sam.userId}`],
        ['POST', '/api/user/manage', { id: sam.userId, action: 'disable' }],
      ];
      const before = await rowOf(sam.userId!);
      const count = await userCount();
      for (const [method, url, body] of calls) {
        const asVisitor = await visitor.request(method as 'GET', url, body);
        expect(asVisitor.statusCode, `${method} ${url}`).toBe(401);
        expect(asVisitor.json().success).toBe(false);
        const asUser = await sam.request(method as 'GET', url, body);
        expect(asUser.statusCode, `${method} ${url}`).toBe(403);
        expect(asUser.json().success).toBe(false);
      }
      expect(await rowOf(sam.userId!)).toEqual(before);
      expect(await userCount()).toBe(count);
    });
  });
});
