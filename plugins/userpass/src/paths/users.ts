/**
 * `users`, `users/:username`, `users/:username/password`,
 * `users/:username/policies`, as Vault documents them. A user's password is
 * taken only to be hashed (password.ts): no read, list or error ever carries
 * it or its hash.
 */
import { badRequest, definePath, f, scanStorage, tokens, type createKeyedMutex, type PathDef } from '@strongroom/sdk-plugin';
import type { PasswordHasher } from '../password.js';
import type { UserEntry, UserpassStore } from '../store.js';

interface Deps {
  store: UserpassStore;
  hasher: PasswordHasher;
  mutex: ReturnType<typeof createKeyedMutex>;
  mountId: string;
}

/** Vault's name rule: letters, digits, underscore, hyphen and period; a letter, digit or underscore first and last. */
const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

/** Usernames are case-insensitive, as in Vault: stored and looked up lower-cased. */
export function userKey(raw: string): string {
  const name = raw.toLowerCase();
  if (!NAME_RE.test(name) || Buffer.byteLength(name, 'utf8') > 512) {
    throw badRequest('field "username": must be letters, digits, underscore, hyphen or period, starting and ending with a letter, digit or underscore');
  }
  return name;
}

const usernameField = { username: f.string().describe('Username (case-insensitive).') };
const passwordField = { password: f.sensitive(f.string().describe('Password; hashed, never stored or returned as given.')).optional() };
/** Vault's deprecated user fields, taken when their token_* name is not sent. */
const legacyFields = {
  ttl: f.deprecated(f.duration().describe('Deprecated alias of token_ttl')).optional(),
  max_ttl: f.deprecated(f.duration().describe('Deprecated alias of token_max_ttl')).optional(),
  bound_cidrs: f.deprecated(f.commaList().describe('Deprecated alias of token_bound_cidrs')).optional(),
};
const LEGACY: Record<keyof typeof legacyFields, string> = { ttl: 'token_ttl', max_ttl: 'token_max_ttl', bound_cidrs: 'token_bound_cidrs' };

/** The token settings after a write, Vault's legacy names mapped onto the current ones. */
function applyTokenInput<T extends tokens.Settings>(u: T, data: Record<string, unknown>, provided: ReadonlySet<string>): T {
  const d = { ...data };
  const given = new Set(provided);
  for (const [old, current] of Object.entries(LEGACY)) {
    if (given.has(old) && d[old] !== undefined && !given.has(current)) {
      d[current] = d[old];
      given.add(current);
    }
  }
  return tokens.apply(u, d, given);
}

function requirePassword(data: { password?: string | undefined }, provided: ReadonlySet<string>): string {
  const password = provided.has('password') ? (data.password ?? '') : '';
  if (password === '') throw badRequest('field "password": missing password');
  return password;
}

export function usersListPath({ store }: Pick<Deps, 'store'>): PathDef {
  return definePath({
    pattern: 'users',
    operations: {
      list: { summary: 'List the users', handler: () => store.listUsers() },
      scan: { summary: 'Every user name, as SCAN pages it.', handler: scanStorage(store.userPrefix) },
    },
    synopsis: 'List the users of this userpass mount.',
  });
}

export function userPath({ store, hasher, mutex, mountId }: Deps): PathDef {
  return definePath({
    pattern: 'users/:username',
    fields: { ...usernameField, ...passwordField, ...tokens.fields, ...legacyFields },
    existenceCheck: async (req) => (await store.getUser(userKey(req.data.username))) !== null,
    operations: {
      read: {
        summary: 'Read a user (never its password)',
        handler: async (req) => {
          const u = await store.getUser(userKey(req.data.username));
          return u ? { data: tokens.view(u) } : null;
        },
      },
      update: {
        summary: 'Create or update a user',
        handler: async (req) => {
          const name = userKey(req.data.username);
          await mutex.run(`${mountId}:user:${name}`, async () => {
            const existing = await store.getUser(name);
            // The settings are checked before the password is hashed: a refused write costs no derivation.
            const settings = applyTokenInput(existing ?? tokens.defaults(), req.data, req.provided);
            // On an update an empty password keeps the current one, as in Vault.
            const sent = req.provided.has('password') && (req.data.password ?? '') !== '';
            const hash = existing && !sent ? existing.password_hash : await hasher.hash(requirePassword(req.data, req.provided));
            await store.saveUser({ ...settings, name, password_hash: hash });
          });
        },
      },
      delete: {
        summary: 'Delete a user',
        handler: async (req) => {
          const name = userKey(req.data.username);
          await mutex.run(`${mountId}:user:${name}`, () => store.deleteUser(name));
        },
      },
    },
    synopsis: 'Manage the users allowed to log in.',
    description: `A user has a password (required at creation) and the settings of the tokens its
logins get. The password is stored as an scrypt hash and never returned.`,
  });
}

/** Changes one part of an existing user under its lock. */
function changeUser(deps: Deps, raw: string, change: (u: UserEntry) => Promise<UserEntry> | UserEntry): Promise<void> {
  const name = userKey(raw);
  return deps.mutex.run(`${deps.mountId}:user:${name}`, async () => {
    const u = await deps.store.getUser(name);
    if (!u) throw badRequest(`user "${name}" does not exist`);
    await deps.store.saveUser(await change(u));
  });
}

export function userPasswordPath(deps: Deps): PathDef {
  return definePath({
    pattern: 'users/:username/password',
    fields: { ...usernameField, ...passwordField },
    operations: {
      update: {
        summary: "Set a user's password",
        handler: async (req) => {
          const password = requirePassword(req.data, req.provided);
          await changeUser(deps, req.data.username, async (u) => ({ ...u, password_hash: await deps.hasher.hash(password) }));
        },
      },
    },
    synopsis: "Reset a user's password.",
  });
}

export function userPoliciesPath(deps: Deps): PathDef {
  return definePath({
    pattern: 'users/:username/policies',
    fields: { ...usernameField, token_policies: tokens.fields.token_policies, policies: tokens.fields.policies },
    operations: {
      update: {
        summary: "Set a user's token policies",
        handler: async (req) => {
          const given = ['token_policies', 'policies'].some((k) => req.provided.has(k) && (req.data as Record<string, unknown>)[k] !== undefined);
          if (!given) throw badRequest('field "token_policies": missing token_policies');
          await changeUser(deps, req.data.username, (u) => tokens.apply(u, req.data as Record<string, unknown>, req.provided));
        },
      },
    },
    synopsis: "Set the policies of a user's tokens.",
  });
}
