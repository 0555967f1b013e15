import { Role } from '@turnpike/core/domain/closed-sets';
import { useSyncExternalStore } from 'react';
import { readStoredJson, StorageKey, writeStored } from './storage.ts';

export { Role };

/** The short user the login answer returns and the console keeps in local storage under `user`. */
export interface SessionUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
}

type Listener = () => void;
const listeners = new Set<Listener>();

export function getSessionUser(): SessionUser | null {
  const user = readStoredJson<SessionUser>(StorageKey.User);
  return user && typeof user.id === 'number' ? user : null;
}

export function setSessionUser(user: SessionUser | null): void {
  writeStored(StorageKey.User, user ? JSON.stringify(user) : null);
  for (const listener of listeners) listener();
}

export function subscribeSession(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const isAdmin = (user: SessionUser | null) => (user?.role ?? 0) >= Role.Admin;
export const isRoot = (user: SessionUser | null) => (user?.role ?? 0) >= Role.Root;

/** The stored user, re-rendering when it changes (login, logout, 401). */
export function useSessionUser(): SessionUser | null {
  const raw = useSyncExternalStore(
    subscribeSession,
    () => JSON.stringify(getSessionUser()),
    () => 'null',
  );
  return JSON.parse(raw) as SessionUser | null;
}
