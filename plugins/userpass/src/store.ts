/**
 * Userpass storage: `user/<username>` -> the user's password hash and token
 * settings. Security invariant: no password is stored, only its scrypt hash
 * (password.ts); the barrier in the core encrypts the entry as a whole.
 * Users are cached in this process by the SDK's record store (dropped on
 * every write and on the core's invalidation; a miss is remembered too, so
 * a login for a user that does not exist reads storage no more often than
 * one for a user that does).
 */
import { createRecordStore, tokens, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import { passwordHash } from './password.js';

const userEntry = z.object({
  name: z.string(),
  password_hash: passwordHash,
  ...tokens.settings.shape,
});
export type UserEntry = z.output<typeof userEntry>;

export type UserpassStore = ReturnType<typeof createUserpassStore>;

/** Users cached at most (an entry is well under 1 KiB). */
const CACHE_MAX = 30_000;

export function createUserpassStore(deps: { storage: Storage }) {
  const records = createRecordStore(deps.storage, { cacheMax: CACHE_MAX });
  const users = records.kind('user/', userEntry);
  return {
    getUser: (name: string) => users.get(name),
    /** The cached user, frozen and shared: for logins and renewals, which change nothing. */
    viewUser: (name: string) => users.view(name),
    listUsers: () => users.list(),
    /** Where the users live in storage (a SCAN of users/ reads it in one call). */
    userPrefix: users.prefix,
    saveUser: (u: UserEntry) => users.put(u.name, u),
    deleteUser: (name: string) => users.delete(name),
    invalidate: (key: string) => records.invalidate(key),
  };
}
