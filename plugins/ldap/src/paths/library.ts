/**
 * Library sets: accounts lent out one borrower at a time.
 *   library (LIST), library/:set_name (POST, GET, DELETE),
 *   library/:set_name/status, library/:set_name/check-out,
 *   library/:set_name/check-in, library/manage/:set_name/check-in.
 *
 * Every account's password is set by the engine when it joins a set and
 * rotated at every check-in, so a borrower's password stops working once the
 * account is back. A check-out is a renewable lease; its expiry or revocation
 * checks the account in (only that check-out: `checkout_id`). Check-out and
 * check-in of a set run under the set's lock, so two callers racing for the
 * last free account get it exactly once. The borrower is recorded by entity
 * id and token accessor, never by the token itself.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, type ClientInfo, definePath, defineSecret, f, type HandlerRequest, parseCommaList, type PathDef, permissionDenied, readRecord, type SecretTypeDef } from '@strongroom/sdk-plugin';
import { directoryError } from '../directory.js';
import type { Engine } from '../engine.js';
import type { LibraryAccount, LibrarySet } from '../store.js';

const LIBRARY_SECRET_TYPE = 'library';
const DEFAULT_LIBRARY_TTL = 24 * 3600;

const setFields = {
  set_name: f.string().describe('Library set name'),
  service_account_names: f.commaList().describe('Accounts lent out by the set; they must exist and belong to no other set').optional(),
  ttl: f.duration().describe('Check-out length (default 24h; 0 unlimited)').optional(),
  max_ttl: f.duration().describe('Check-out length including renewals (default 24h; 0 unlimited)').optional(),
  disable_check_in_enforcement: f.bool().describe('Let anyone check an account in, not only its borrower').optional(),
};

const checkInFields = {
  set_name: f.string().describe('Library set name'),
  service_account_names: f.commaList().describe('Accounts to check in; may be omitted when the caller has one checked out').optional(),
};

/** Whether this caller borrowed the account: the same entity when there is one, else the same token. */
const isBorrower = (a: LibraryAccount, c: ClientInfo) => (a.borrower_entity_id ? a.borrower_entity_id === c.entityId : a.borrower_client_token !== '' && a.borrower_client_token === c.tokenAccessor);

export function librarySecret(engine: Engine, lib: ReturnType<typeof createLibrary>): SecretTypeDef {
  return defineSecret({
    type: LIBRARY_SECRET_TYPE,
    renew: async (req) => {
      const ref = req.secret!;
      const { set: setName, account, checkout_id } = ref.internalData as { set: string; account: string; checkout_id: string };
      const set = await engine.store.sets.get(setName);
      const a = await engine.store.accounts.get(account);
      if (!set || !a || !a.checked_out || a.checkout_id !== checkout_id) throw badRequest(`account ${account} is no longer checked out under this lease`);
      const wanted = ref.increment > 0 ? ref.increment : set.ttl;
      const capped = set.ttl > 0 ? Math.min(wanted, set.ttl) : wanted;
      const left = set.max_ttl > 0 ? Math.max(0, Math.floor((ref.issueTime + set.max_ttl * 1000 - engine.now()) / 1000)) : capped;
      return { data: {}, secret: { type: LIBRARY_SECRET_TYPE, ttl: Math.min(capped, left), maxTtl: set.max_ttl, renewable: true, internalData: ref.internalData } };
    },
    revoke: async (req) => {
      const { set, account, checkout_id } = req.secret!.internalData as { set: string; account: string; checkout_id: string };
      await lib.checkIn(set, [account], { force: true, checkoutId: checkout_id });
      return null;
    },
  });
}

export function createLibrary(engine: Engine) {
  const { store } = engine;
  const locked = <T>(set: string, fn: () => Promise<T>) => engine.mutex.run(`set/${set}`, fn);

  const { accounts } = engine.rotations;
  /** Stores the account as given, then sets a fresh password on it (the kit's rotation: write-ahead entry, settled by bind after a crash). */
  const rotate = async (a: LibraryAccount): Promise<void> => {
    await store.accounts.put(a.name, a);
    await accounts.rotate(a.name);
  };

  /** An account whose rotation was cut short keeps whichever password binds; answers the account as it now is. */
  const settle = async (a: LibraryAccount): Promise<LibraryAccount> => ((await accounts.settle(a.name)) === 'none' ? a : ((await store.accounts.get(a.name)) ?? a));

  return {
    locked,
    rotate,
    /** Checks accounts in; `force` skips the borrower check; `checkoutId` limits it to one check-out (lease revocation). Returns the accounts checked in. */
    checkIn: (setName: string, names: string[], opts: { force: boolean; client?: ClientInfo; checkoutId?: string }) =>
      locked(setName, async () => {
        const set = await store.sets.get(setName);
        const done: string[] = [];
        for (const name of names) {
          const a = await store.accounts.get(name);
          if (!a || a.set !== setName) {
            if (opts.checkoutId) continue; // the set or account went away: nothing left to check in
            throw badRequest(`service_account_names: ${name} is not in set ${setName}`);
          }
          if (!a.checked_out) continue;
          if (opts.checkoutId && a.checkout_id !== opts.checkoutId) continue;
          if (!opts.force && !set?.disable_check_in_enforcement && !(opts.client && isBorrower(a, opts.client))) {
            throw permissionDenied(`${name} is checked out by another caller`);
          }
          const back = { ...a, checked_out: false, checkout_id: '', borrower_entity_id: '', borrower_client_token: '' };
          // The borrower's password stops working: a new one is set as the account comes back.
          await rotate(back).catch((err: unknown) => {
            // Returned all the same; the old password stays until the next rotation succeeds.
            engine.logger.warn('rotating a checked-in library account failed', { account: name, error: String(err) });
          });
          done.push(name);
        }
        return done;
      }),
    settle,
  };
}

export function libraryPaths(engine: Engine, lib: ReturnType<typeof createLibrary>, secret: SecretTypeDef): PathDef[] {
  const { store } = engine;

  const list = definePath({
    pattern: 'library',
    synopsis: 'List the library sets.',
    operations: { list: { summary: 'Names of the library sets.', handler: async (req) => ({ data: { keys: await store.sets.list(req.list) } }) } },
  });

  const set = definePath({
    pattern: 'library/:set_name',
    fields: setFields,
    synopsis: 'Manage a library set of accounts lent out one borrower at a time.',
    existenceCheck: async (req) => (await store.sets.get(req.data.set_name)) !== null,
    operations: {
      read: {
        summary: 'Read a set.',
        handler: (req) => readRecord(store.sets, req.data.set_name),
      },
      update: {
        summary: 'Create or update a set; new accounts get a password set by the engine.',
        handler: async (req) => {
          const d = req.data as Record<string, unknown>;
          const name = String(d.set_name);
          const has = (k: string) => req.provided.has(k) && d[k] !== undefined;
          return lib.locked(name, async () => {
            const existing = await store.sets.get(name);
            const next: LibrarySet = existing ?? { name, service_account_names: [], ttl: DEFAULT_LIBRARY_TTL, max_ttl: DEFAULT_LIBRARY_TTL, disable_check_in_enforcement: false };
            if (has('service_account_names')) next.service_account_names = [...new Set(d.service_account_names as string[])];
            if (has('ttl')) next.ttl = Number(d.ttl);
            if (has('max_ttl')) next.max_ttl = Number(d.max_ttl);
            if (has('disable_check_in_enforcement')) next.disable_check_in_enforcement = Boolean(d.disable_check_in_enforcement);
            if (next.service_account_names.length === 0) throw badRequest('service_account_names: missing required field');
            if (next.max_ttl > 0 && next.ttl > next.max_ttl) throw badRequest('ttl: cannot be longer than max_ttl');
            const removed = (existing?.service_account_names ?? []).filter((n) => !next.service_account_names.includes(n));
            const added = next.service_account_names.filter((n) => !(existing?.service_account_names ?? []).includes(n));
            for (const n of removed) if ((await store.accounts.get(n))?.checked_out) throw badRequest(`service_account_names: ${n} is checked out and cannot leave the set`);
            const found: LibraryAccount[] = [];
            await engine.config();
            for (const n of added) {
              const other = await store.accounts.get(n);
              if (other && other.set !== name) throw badRequest(`service_account_names: ${n} already belongs to set ${other.set}`);
              const dn = await engine.directory.findDn(n).catch((err: unknown) => {
                throw directoryError(`service_account_names: looking up ${n} failed`, err, []);
              });
              found.push({ name: n, set: name, dn, password: '', checked_out: false, checkout_id: '', borrower_entity_id: '', borrower_client_token: '' });
            }
            // The engine knows every password from the start: each new account gets one now (all or none join).
            try {
              for (const a of found) await lib.rotate(a);
            } catch (err) {
              for (const a of found) await store.accounts.delete(a.name).catch(() => undefined);
              throw err;
            }
            for (const n of removed) await store.accounts.delete(n);
            await store.sets.put(name, next);
            return null;
          });
        },
      },
      delete: {
        summary: 'Delete a set; its accounts stay in the directory.',
        handler: async (req) =>
          lib.locked(req.data.set_name, async () => {
            const s = await store.sets.get(req.data.set_name);
            if (!s) return null;
            for (const n of s.service_account_names) if ((await store.accounts.get(n))?.checked_out) throw badRequest(`${n} is checked out; check it in before deleting the set`);
            for (const n of s.service_account_names) await store.accounts.delete(n);
            await store.sets.delete(req.data.set_name);
            return null;
          }),
      },
    },
  });

  const status = definePath({
    pattern: 'library/:set_name/status',
    fields: { set_name: f.string().describe('Library set name') },
    synopsis: 'Which accounts of a set are available.',
    operations: {
      read: {
        summary: 'Availability of each account, with the borrower of those checked out.',
        handler: async (req) => {
          const s = await store.sets.get(req.data.set_name);
          if (!s) throw badRequest(`unknown library set: ${req.data.set_name}`);
          const data: Record<string, unknown> = {};
          for (const n of s.service_account_names) {
            const a = await store.accounts.get(n);
            data[n] = a?.checked_out ? { available: false, borrower_client_token: a.borrower_client_token, borrower_entity_id: a.borrower_entity_id } : { available: true };
          }
          return { data };
        },
      },
    },
  });

  const checkOut = definePath({
    pattern: 'library/:set_name/check-out',
    fields: { set_name: f.string().describe('Library set name'), ttl: f.duration().describe("Check-out length; default and cap: the set's ttl").optional() },
    synopsis: 'Check an account out.',
    operations: {
      update: {
        summary: 'Lend a free account; 400 when none is free.',
        handler: async (req) => {
          const setName = req.data.set_name;
          const out = await lib.locked(setName, async () => {
            const s = await store.sets.get(setName);
            if (!s) throw badRequest(`unknown library set: ${setName}`);
            for (const n of s.service_account_names) {
              let a = await store.accounts.get(n);
              if (!a || a.checked_out) continue;
              a = await lib.settle(a);
              const taken: LibraryAccount = { ...a, checked_out: true, checkout_id: randomUUID(), borrower_entity_id: req.client.entityId, borrower_client_token: req.client.tokenAccessor };
              await store.accounts.put(n, taken);
              return { set: s, account: taken };
            }
            throw badRequest(`no account of set ${setName} is available`);
          });
          const wanted = req.data.ttl && req.data.ttl > 0 ? req.data.ttl : out.set.ttl;
          const ttl = out.set.ttl > 0 ? Math.min(wanted, out.set.ttl) : wanted;
          return secret.response(
            { service_account_name: out.account.name, password: out.account.password },
            { set: setName, account: out.account.name, checkout_id: out.account.checkout_id },
            { ttl, maxTtl: out.set.max_ttl, renewable: true },
          );
        },
      },
    },
  });

  const checkInHandler = (force: boolean) => async (req: HandlerRequest<Record<string, unknown>>) => {
    const setName = String(req.data.set_name);
    const s = await store.sets.get(setName);
    if (!s) throw badRequest(`unknown library set: ${setName}`);
    let names = req.provided.has('service_account_names') && req.data.service_account_names !== undefined ? parseCommaList(req.data.service_account_names) : [];
    if (names.length === 0) {
      // Omitted: the one account this caller has out (any one checked out, when forced or unenforced).
      const out: string[] = [];
      for (const n of s.service_account_names) {
        const a = await store.accounts.get(n);
        if (a?.checked_out && (force || s.disable_check_in_enforcement || isBorrower(a, req.client))) out.push(n);
      }
      if (out.length > 1) throw badRequest('service_account_names: more than one account is checked out; name the ones to check in');
      names = out;
    }
    const done = await lib.checkIn(setName, names, { force, client: req.client });
    return { data: { check_ins: done } };
  };

  const checkIn = definePath({
    pattern: 'library/:set_name/check-in',
    fields: checkInFields,
    synopsis: 'Check accounts in.',
    operations: { update: { summary: 'Return accounts; only their borrower may, unless enforcement is off.', handler: checkInHandler(false) } },
  });

  const manageCheckIn = definePath({
    pattern: 'library/manage/:set_name/check-in',
    fields: checkInFields,
    synopsis: 'Force the check-in of accounts.',
    operations: { update: { summary: 'Return accounts whoever borrowed them (for highly privileged callers).', handler: checkInHandler(true) } },
  });

  return [list, manageCheckIn, status, checkOut, checkIn, set];
}
