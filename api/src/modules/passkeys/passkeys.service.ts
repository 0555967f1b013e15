/**
 * Passkeys (WebAuthn, https://www.w3.org/TR/webauthn-3/) through @simplewebauthn/server: several per user, each
 * named; a signed-in user registers and removes them; they sign in without a password (the authenticator must
 * verify the user: PIN or biometrics, so the passkey alone is two factors) or answer the second step after a
 * password (presence is enough there). Challenges are kept server-side and work once (challenges.ts). Adding or
 * removing one ends the user's sessions (docs/adr/0044).
 */

import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type {
  PasskeyAssertion,
  PasskeyRegistration,
  PasskeyStatus,
  PasskeyView,
} from '@turnpike/core/contracts/passkeys';
import { type PasskeyCredential, passkeyCredentials } from '@turnpike/core/db/schema/index';
import type { User } from '@turnpike/core/db/schema/users';
import { UserStatus } from '@turnpike/core/domain/users';
import { AppError } from '@turnpike/core/errors';
import { nowSeconds } from '@turnpike/core/repos/log.repo';
import { createUserRepo } from '@turnpike/core/repos/user.repo';
import { and, desc, eq } from 'drizzle-orm';
import type { AppDeps } from '../../deps.ts';
import { endSessionsOnFactorChange } from '../two-factor/factor-change.ts';
import { CHALLENGE_TTL_SECONDS, type ChallengePurpose, keepChallenge, spendChallenge } from './challenges.ts';
import { relyingPartyOf } from './relying-party.ts';

/** Passkeys one user may hold. */
export const MAX_PASSKEYS = 20;
const NOT_ACCEPTED = 'the passkey was not accepted; try again';

const viewOf = (row: PasskeyCredential): PasskeyView => ({
  id: row.id,
  name: row.name,
  created_at: row.createdAt,
  last_used_at: row.lastUsedAt,
  backup_eligible: row.backupEligible,
});

/**
 * new-api names a user to the authenticator by the decimal text of their id (its WebAuthnID); Turnpike does the
 * same, so passkeys carried from new-api answer with a user handle Turnpike reads alike.
 */
const userHandleOf = (userId: number) => new TextEncoder().encode(String(userId));

export function createPasskeyService(deps: AppDeps) {
  const { db } = deps;
  const userRepo = createUserRepo(db);

  const credentialsOf = (userId: number) =>
    db
      .select()
      .from(passkeyCredentials)
      .where(eq(passkeyCredentials.userId, userId))
      .orderBy(desc(passkeyCredentials.createdAt), desc(passkeyCredentials.id));

  const descriptorOf = (row: PasskeyCredential) => ({
    id: row.credentialId,
    transports: row.transports,
  });

  /** The challenge the browser answered, as its clientDataJSON says (checked against ours by the library). */
  const spender = (purpose: ChallengePurpose, userId: number) => (challenge: string) =>
    spendChallenge(db, challenge, purpose, userId);

  async function fail<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (error instanceof AppError) throw error;
      // The library says why in English for developers; the caller learns only that it was refused.
      throw new AppError('INVALID_CREDENTIALS', NOT_ACCEPTED, { cause: error });
    }
  }

  return {
    async status(userId: number): Promise<PasskeyStatus> {
      const rows = await credentialsOf(userId);
      const lastUsed = Math.max(0, ...rows.map((r) => r.lastUsedAt));
      return { enabled: rows.length > 0, last_used_at: lastUsed || null, passkeys: rows.map(viewOf) };
    },

    async hasPasskeys(userId: number): Promise<boolean> {
      const [row] = await db
        .select({ id: passkeyCredentials.id })
        .from(passkeyCredentials)
        .where(eq(passkeyCredentials.userId, userId))
        .limit(1);
      return row !== undefined;
    },

    async registerBegin(user: User) {
      const rp = relyingPartyOf(deps.options);
      const held = await credentialsOf(user.id);
      if (held.length >= MAX_PASSKEYS)
        throw new AppError('CONFLICT', `at most ${MAX_PASSKEYS} passkeys per account; remove one first`);
      const options = await generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: user.username,
        userID: userHandleOf(user.id),
        userDisplayName: user.displayName || user.username,
        timeout: CHALLENGE_TTL_SECONDS * 1000,
        attestationType: 'none',
        excludeCredentials: held.map(descriptorOf),
        // Discoverable, so it can sign in without a user name; verification where the authenticator has it.
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
        // EdDSA, ES256, RS256: what authenticators make. Named, so the library does not probe the runtime for
        // post-quantum algorithms (an experimental-feature warning in every server's log).
        supportedAlgorithmIDs: [-8, -7, -257],
      });
      await keepChallenge(db, options.challenge, 'register', user.id);
      return options;
    },

    /** Registers the passkey the browser made; answers the user's new session generation. */
    async registerFinish(user: User, input: PasskeyRegistration): Promise<number> {
      const rp = relyingPartyOf(deps.options);
      const { name, ...response } = input;
      const result = await fail(
        verifyRegistrationResponse({
          response: response as unknown as RegistrationResponseJSON,
          expectedChallenge: spender('register', user.id),
          expectedOrigin: rp.origin,
          expectedRPID: rp.id,
          requireUserVerification: false,
        }),
      );
      if (!result.verified) throw new AppError('INVALID_CREDENTIALS', NOT_ACCEPTED);
      const info = result.registrationInfo;
      const count = (await credentialsOf(user.id)).length;
      return db.transaction(async (tx) => {
        const inserted = await tx
          .insert(passkeyCredentials)
          .values({
            userId: user.id,
            name: name?.trim() || `Passkey ${count + 1}`,
            credentialId: info.credential.id,
            publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
            signCount: info.credential.counter,
            transports: info.credential.transports ?? [],
            aaguid: info.aaguid === '00000000-0000-0000-0000-000000000000' ? '' : info.aaguid,
            backupEligible: info.credentialDeviceType === 'multiDevice',
            createdAt: nowSeconds(),
          })
          .onConflictDoNothing()
          .returning({ id: passkeyCredentials.id });
        if (inserted.length === 0) throw new AppError('CONFLICT', 'this passkey is already registered');
        return endSessionsOnFactorChange(tx, user.id);
      });
    },

    async rename(user: User, id: number, name: string): Promise<void> {
      const renamed = await db
        .update(passkeyCredentials)
        .set({ name })
        .where(and(eq(passkeyCredentials.id, id), eq(passkeyCredentials.userId, user.id)))
        .returning({ id: passkeyCredentials.id });
      if (renamed.length === 0) throw new AppError('NOT_FOUND', 'no such passkey');
    },

    /** Removes one passkey of the user, or all of them (new-api's DELETE /api/user/passkey); the new generation. */
    async remove(user: User, id: number | 'all'): Promise<number> {
      return db.transaction(async (tx) => {
        const mine = eq(passkeyCredentials.userId, user.id);
        const removed = await tx
          .delete(passkeyCredentials)
          .where(id === 'all' ? mine : and(mine, eq(passkeyCredentials.id, id)))
          .returning({ id: passkeyCredentials.id });
        if (removed.length === 0)
          throw new AppError('NOT_FOUND', id === 'all' ? 'no passkey to remove' : 'no such passkey');
        return endSessionsOnFactorChange(tx, user.id);
      });
    },

    /**
     * Options for signing in. With `forUser` (the password step's user) it is the second step: that user's passkeys
     * only. Without, it is a password-less sign-in: any passkey of this site, with the user verified.
     */
    async signInBegin(forUser: User | undefined) {
      const rp = relyingPartyOf(deps.options);
      const allowCredentials = forUser ? (await credentialsOf(forUser.id)).map(descriptorOf) : undefined;
      if (forUser && allowCredentials?.length === 0)
        throw new AppError('BAD_REQUEST', 'this account has no passkey');
      const options = await generateAuthenticationOptions({
        rpID: rp.id,
        timeout: CHALLENGE_TTL_SECONDS * 1000,
        userVerification: forUser ? 'preferred' : 'required',
        ...(allowCredentials ? { allowCredentials } : {}),
      });
      await keepChallenge(db, options.challenge, forUser ? 'second-step' : 'sign-in', forUser?.id ?? 0);
      return options;
    },

    /** The user a passkey answer signs in, once the library has checked it against the stored public key. */
    async signInFinish(input: PasskeyAssertion, forUser: User | undefined): Promise<User> {
      const rp = relyingPartyOf(deps.options);
      const { flow_token: _flow, ...response } = input;
      const [credential] = await db
        .select()
        .from(passkeyCredentials)
        .where(eq(passkeyCredentials.credentialId, response.id));
      if (!credential || (forUser && credential.userId !== forUser.id))
        throw new AppError('INVALID_CREDENTIALS', 'this passkey is not registered for this account');
      const handle = response.response.userHandle;
      if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== String(credential.userId))
        throw new AppError('INVALID_CREDENTIALS', NOT_ACCEPTED);
      const result = await fail(
        verifyAuthenticationResponse({
          response: response as unknown as AuthenticationResponseJSON,
          expectedChallenge: spender(forUser ? 'second-step' : 'sign-in', forUser?.id ?? 0),
          expectedOrigin: rp.origin,
          expectedRPID: rp.id,
          credential: {
            id: credential.credentialId,
            publicKey: Buffer.from(credential.publicKey, 'base64url'),
            counter: credential.signCount,
            transports: credential.transports,
          },
          requireUserVerification: !forUser,
        }),
      );
      if (!result.verified) throw new AppError('INVALID_CREDENTIALS', NOT_ACCEPTED);
      await db
        .update(passkeyCredentials)
        .set({ signCount: result.authenticationInfo.newCounter, lastUsedAt: nowSeconds() })
        .where(eq(passkeyCredentials.id, credential.id));
      const user = forUser ?? (await userRepo.findById(credential.userId));
      if (!user) throw new AppError('INVALID_CREDENTIALS', NOT_ACCEPTED);
      if (user.status !== UserStatus.Enabled)
        throw new AppError('USER_DISABLED', 'this user has been disabled');
      return user;
    },
  };
}
