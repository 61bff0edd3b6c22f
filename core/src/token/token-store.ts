/**
 * The token store: creation (planned by plan.ts), lookup, use counting, renewal and
 * revocation of client tokens, and token-store roles. Its contract is in types.ts.
 *
 * Security invariants:
 * - A token id is never written anywhere: entries live at `sys/token/id/<HMAC(id)>`;
 *   accessors at `sys/token/accessor/<HMAC("accessor:"+accessor)>`, whose value
 *   holds the accessor and the token's HMAC, from which the id cannot be recovered.
 * - Nothing is logged with a token id in it; logs name accessors.
 * - Revocation is iterative (BFS over the parent index, children destroyed before
 *   their parents) and crash-safe: the root is first marked pending (with a key in
 *   `sys/token/pending/`), and `resumeRevocations` (at unseal) or `tidy` resumes it.
 * - Expired, exhausted and pending-revocation tokens are nonexistent to `lookup`.
 * - Expiry is the expiration manager's: an expiring service token is a lease there
 *   (written and removed in the same batch as the token), which revokes the token when
 *   due, with the same retries, backoff and irrevocable state as any lease.
 */
import type { AuthSpec } from '@strongroom/sdk-plugin/host';
import { addressAllowed, badRequest, buildBlockList, createKeyedMutex, createReadCache, permissionDenied } from '@strongroom/sdk-plugin/host';
import { namespaceStoragePrefix } from '../namespace/namespaces.js';
import type { PhysicalOp } from '../storage/physical.js';
import { tokenLeaseId } from '../expiration/lease-entry.js';
import type { TokenLease } from '../expiration/types.js';
import {
  BATCH_PREFIX,
  decryptBatchToken,
  encryptBatchToken,
  hmacHex,
  newAccessor,
  newServiceTokenId,
} from './ids.js';
import { sanitizePolicies } from './policies.js';
import { renderAuth, renderLookup, renderRole } from './render.js';
import { defaultRole, mergeRole, ROLE_NAME } from './roles.js';
import { calculateTtl } from './ttl.js';
import { checkCustomId, planCreate, planLogin, planRoot, planWrapping, type TokenFields } from './plan.js';
import type { CreatedToken, CreateTokenRequest, LoginContext, PendingRevocation, TidyResult, TokenEntry, TokenRole, TokenStore, TokenStoreDeps } from './types.js';
import type { BlockList } from 'node:net';

const TOKEN_PREFIX = 'sys/token/';
const ID = `${TOKEN_PREFIX}id/`;
const ACCESSOR = `${TOKEN_PREFIX}accessor/`;
const PARENT = `${TOKEN_PREFIX}parent/`;
/** One empty key per token whose revocation is under way, so an unseal resumes them without reading every token. */
const PENDING = `${TOKEN_PREFIX}pending/`;
/** Token roles are per namespace, under the namespace's own tree. */
const rolesFolder = (namespaceId: string) => `${namespaceStoragePrefix(namespaceId)}${TOKEN_PREFIX}roles/`;

/** Longer presented tokens are not looked at (a batch token is well under 2 KiB). */
const MAX_TOKEN_LENGTH = 8192;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const encode = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(v), 'utf8');
const decode = <T>(v: Uint8Array): T => JSON.parse(Buffer.from(v).toString('utf8')) as T;

/** Same policies, ignoring `default` (an auth method answers the policies it granted, the token also has `default`). */
function samePolicies(a: readonly string[], b: readonly string[]): boolean {
  const x = sanitizePolicies(a, false).filter((p) => p !== 'default');
  const y = sanitizePolicies(b, false).filter((p) => p !== 'default');
  return x.length === y.length && x.every((p, i) => p === y[i]);
}

function freeze(e: TokenEntry): TokenEntry {
  Object.freeze(e.policies);
  Object.freeze(e.meta);
  Object.freeze(e.boundCidrs);
  return Object.freeze(e);
}

/** Without a router (init, tests): `auth/<method>/` for auth paths, else the first segment. */
function fallbackMountPath(path: string): string {
  const parts = path.split('/');
  return `${parts.slice(0, parts[0] === 'auth' && parts.length > 2 ? 2 : 1).join('/')}/`;
}

export function createTokenStore(deps: TokenStoreDeps): TokenStore {
  const clock = deps.clock ?? { now: () => Date.now() };
  const log = deps.logger;
  const cacheSize = deps.cacheSize ?? 10_000;
  // Entries as stored, whatever their state. Every entry write goes through `cache.write`, so a
  // storage read in flight while a token is revoked or changed cannot re-cache the old entry.
  const cache = createReadCache<TokenEntry>({ max: cacheSize });
  const locks = createKeyedMutex();
  const inFlight = new Map<string, Promise<void>>();
  /** Keys being destroyed by a running tree revocation: already nonexistent to lookups. */
  const revoking = new Set<string>();
  const cidrLists = new WeakMap<TokenEntry, BlockList>();
  const tokenKey = (id: string): string => hmacHex(deps.hmacKey, id);
  const accessorKey = (accessor: string): string => hmacHex(deps.hmacKey, `accessor:${accessor}`);
  const sys = { systemDefaultTtl: deps.systemDefaultTtl, systemMaxTtl: deps.systemMaxTtl };

  const isLive = (e: TokenEntry): boolean =>
    e.numUses !== -1 && e.revokePending === undefined && !revoking.has(e.key) && (e.expireTime === 0 || clock.now() < e.expireTime);

  /** The stored entry whatever its state (cached). */
  function loadRaw(key: string): Promise<TokenEntry | null> {
    return cache.get(key, async () => {
      const raw = await deps.store.get(ID + key);
      return raw === null ? null : freeze(decode<TokenEntry>(raw));
    });
  }

  /** An entry's writes: itself, and its pending mark while a revocation of it is under way. */
  const entryOps = (e: TokenEntry): PhysicalOp[] => [
    { type: 'put', key: ID + e.key, value: encode(e) },
    ...(e.revokePending !== undefined ? [{ type: 'put' as const, key: PENDING + e.key, value: encode({}) }] : []),
  ];

  /** Writes `ops`, with the token's lease when `leased` (its expiry or renewal changed; `fresh`: a new token with a generated id). */
  function write(e: TokenEntry, ops: PhysicalOp[], leased: boolean, fresh = false): Promise<void> {
    return cache.write(e.key, () => (leased && deps.leases && hasLease(e) ? deps.leases.putTokenLease(leaseOf(e), ops, fresh) : deps.store.batch(ops)));
  }

  async function persist(e: TokenEntry, leased = false): Promise<void> {
    await write(e, entryOps(e), leased);
  }

  const withLock = <T>(key: string, fn: () => Promise<T>): Promise<T> => locks.run(key, fn);

  // ---- the token's lease (expiry lives in the expiration manager) ----

  /** Expiring service tokens have a lease; batch tokens and non-expiring tokens do not. */
  const hasLease = (e: TokenEntry): boolean => e.type === 'service' && e.expireTime !== 0;

  function leaseOf(e: TokenEntry): TokenLease {
    const mount = deps.mountOf?.(e.path, e.namespaceId) ?? { path: fallbackMountPath(e.path), uuid: `tokens-${e.namespaceId}` };
    return {
      tokenKey: e.key,
      path: e.path,
      namespaceId: e.namespaceId,
      mountPath: mount.path,
      mountUuid: mount.uuid,
      issueTime: e.creationTime,
      expireTime: e.expireTime,
      lastRenewalTime: e.lastRenewalTime === 0 ? null : e.lastRenewalTime,
      ttl: e.ttl,
      renewable: e.renewable,
    };
  }

  // ---- revocation ----

  /**
   * Deletes one token (leases first), its accessor and its link under its parent.
   * Entry writes (use, renew, pending marks, orphaning) all hold the token's lock,
   * so none of them can write an entry back after it was destroyed.
   */
  function destroy(key: string, revokeLeases: boolean): Promise<void> {
    return withLock(key, async () => {
      const e = await loadRaw(key);
      if (revokeLeases) await deps.leases?.revokeByToken(key);
      if (e !== null && deps.onDestroy) await deps.onDestroy(e);
      const ops: PhysicalOp[] = [
        { type: 'delete', key: ID + key },
        { type: 'delete', key: PENDING + key },
      ];
      if (e !== null) {
        if (e.accessor !== '') ops.push({ type: 'delete', key: ACCESSOR + accessorKey(e.accessor) });
        if (e.parent !== '') ops.push({ type: 'delete', key: `${PARENT}${e.parent}/${key}` });
      }
      const leases = deps.leases;
      await cache.write(key, () =>
        e !== null && leases && hasLease(e) ? leases.dropTokenLease(tokenLeaseId(e.path, e.key, e.namespaceId), ops) : deps.store.batch(ops),
      );
    });
  }

  function markPending(key: string, how: PendingRevocation): Promise<TokenEntry | null> {
    return withLock(key, async () => {
      const e = await loadRaw(key);
      if (e === null || e.revokePending === how) return e;
      const next = freeze({ ...e, numUses: -1, revokePending: how });
      await persist(next);
      return next;
    });
  }

  function revokeTree(rootKey: string): Promise<void> {
    const existing = inFlight.get(rootKey);
    if (existing) return existing;
    const p = (async () => {
      await markPending(rootKey, 'tree');
      // Breadth-first discovery; destroying in reverse order removes every child before its parent.
      const order = [rootKey];
      const seen = new Set(order);
      revoking.add(rootKey);
      try {
        for (let i = 0; i < order.length; i++) {
          for (const child of await deps.store.list(`${PARENT}${order[i] as string}/`)) {
            if (child.endsWith('/') || seen.has(child)) continue;
            seen.add(child);
            revoking.add(child);
            order.push(child);
          }
        }
        for (let i = order.length - 1; i >= 0; i--) await destroy(order[i] as string, true);
      } finally {
        for (const k of order) revoking.delete(k);
      }
    })();
    inFlight.set(rootKey, p);
    return p.finally(() => inFlight.delete(rootKey));
  }

  async function revokeOrphanByKey(key: string): Promise<void> {
    await markPending(key, 'orphan');
    await deps.leases?.revokeByToken(key);
    for (const child of await deps.store.list(`${PARENT}${key}/`)) {
      if (child.endsWith('/')) continue;
      await withLock(child, async () => {
        const ce = await loadRaw(child);
        const ops: PhysicalOp[] = [{ type: 'delete', key: `${PARENT}${key}/${child}` }];
        let orphaned: TokenEntry | null = null;
        if (ce !== null) {
          orphaned = freeze({ ...ce, parent: '' });
          ops.push({ type: 'put', key: ID + child, value: encode(orphaned) });
        }
        await cache.write(child, () => deps.store.batch(ops));
      });
    }
    await destroy(key, false);
  }

  async function resume(e: TokenEntry): Promise<void> {
    if (e.revokePending === 'orphan') await revokeOrphanByKey(e.key);
    else await revokeTree(e.key);
  }

  // ---- creation ----

  async function issue(fields: TokenFields, customId?: string): Promise<CreatedToken> {
    if (fields.type === 'batch') {
      const id = encryptBatchToken(deps.batchKey, fields, fields.namespaceId);
      const entry = freeze({ ...fields, key: tokenKey(id), accessor: '' });
      return { id, entry, warnings: [] };
    }
    const nsSuffix = fields.namespaceId === 'root' ? '' : `.${fields.namespaceId}`;
    const id = customId !== undefined ? customId + nsSuffix : newServiceTokenId(fields.namespaceId);
    const key = tokenKey(id);
    if (customId !== undefined && (await deps.store.get(ID + key)) !== null) {
      throw badRequest('id: cannot create a token with a duplicate ID');
    }
    const accessor = newAccessor(fields.namespaceId);
    const entry = freeze({ ...fields, key, accessor });
    const ops: PhysicalOp[] = [...entryOps(entry), { type: 'put', key: ACCESSOR + accessorKey(accessor), value: encode({ accessor, tokenKey: key }) }];
    if (entry.parent !== '') ops.push({ type: 'put', key: `${PARENT}${entry.parent}/${key}`, value: encode({}) });
    // A generated id is new to storage; a caller-chosen one may follow a token of the same id.
    await write(entry, ops, true, customId === undefined);
    log.debug('token created', { accessor, path: entry.path, policies: entry.policies });
    return { id, entry, warnings: [] };
  }

  // Role names are case-sensitive (as in Vault): the name stored is the name in the
  // request path, so an ACL rule on auth/token/roles/<name> or create/<name> covers
  // every way to reach that role. (Lower-casing here let `PRIVILEGED` bypass a deny on `privileged`.)
  async function readRole(name: string, namespaceId = 'root'): Promise<TokenRole | null> {
    const raw = await deps.store.get(rolesFolder(namespaceId) + name);
    return raw === null ? null : decode<TokenRole>(raw);
  }

  async function create(parent: TokenEntry | null, req: CreateTokenRequest): Promise<CreatedToken> {
    if (parent !== null && (!isLive(parent) || inFlight.has(parent.key))) throw permissionDenied('parent token is not valid');
    let role: TokenRole | null = null;
    if (req.roleName !== undefined) {
      role = await readRole(req.roleName, req.namespaceId ?? parent?.namespaceId ?? 'root');
      if (role === null) throw badRequest(`role_name: unknown role ${req.roleName}`);
    }
    const plan = planCreate(parent, req, role, clock.now(), sys);
    const created = await issue(plan.fields, plan.customId);
    // The parent may have been revoked while the child was being written: the child must not outlive it.
    if (created.entry.parent !== '' && (revoking.has(created.entry.parent) || (await loadRaw(created.entry.parent)) === null)) {
      if (created.entry.type === 'service') await revokeTree(created.entry.key);
      throw permissionDenied('parent token is not valid');
    }
    return { ...created, warnings: plan.warnings };
  }

  async function createRoot(customId?: string): Promise<CreatedToken> {
    if (customId !== undefined) checkCustomId(customId);
    return issue(planRoot(clock.now()), customId);
  }

  const createWrapping = (opts: { ttl: number; path: string; namespaceId: string }): Promise<CreatedToken> => issue(planWrapping(opts, clock.now()));

  async function createFromLogin(auth: AuthSpec, ctx: LoginContext): Promise<CreatedToken> {
    const plan = planLogin(auth, ctx, clock.now(), sys);
    return { ...(await issue(plan.fields)), warnings: plan.warnings };
  }

  // ---- lookup ----

  async function lookupBatch(id: string): Promise<TokenEntry | null> {
    const key = tokenKey(id);
    // A batch token is its own entry (never stored): the cache keeps it decrypted.
    const e = await cache.get(key, async () => {
      const payload = decryptBatchToken(deps.batchKey, id);
      return payload === null || typeof payload !== 'object' ? null : freeze({ ...(payload as Mutable<Omit<TokenEntry, 'key'>>), key, accessor: '' });
    });
    if (e === null || !isLive(e)) return null;
    // A child batch token dies with its parent.
    if (e.parent !== '') {
      const p = await loadRaw(e.parent);
      if (p === null || !isLive(p)) return null;
    }
    return e;
  }

  async function lookup(id: string): Promise<TokenEntry | null> {
    // Bounds the work an unauthenticated caller can cause with a giant header.
    if (typeof id !== 'string' || id === '' || id.length > MAX_TOKEN_LENGTH) return null;
    if (id.startsWith(BATCH_PREFIX)) return lookupBatch(id);
    const e = await loadRaw(tokenKey(id));
    return e !== null && isLive(e) ? e : null;
  }

  async function keyForAccessor(accessor: string): Promise<string | null> {
    if (accessor === '') return null;
    const raw = await deps.store.get(ACCESSOR + accessorKey(accessor));
    return raw === null ? null : decode<{ tokenKey: string }>(raw).tokenKey;
  }

  async function lookupByAccessor(accessor: string): Promise<TokenEntry | null> {
    const key = await keyForAccessor(accessor);
    if (key === null) return null;
    const e = await loadRaw(key);
    return e !== null && isLive(e) ? e : null;
  }

  // ---- use, renew ----

  async function useToken(entry: TokenEntry): Promise<{ entry: TokenEntry; lastUse: boolean } | null> {
    if (entry.type === 'batch') return isLive(entry) ? { entry, lastUse: false } : null;
    return withLock(entry.key, async () => {
      const cur = await loadRaw(entry.key);
      if (cur === null || !isLive(cur)) return null;
      if (cur.numUses === 0) return { entry: cur, lastUse: false };
      const left = cur.numUses - 1;
      // On the last use the token turns invalid at once and is revoked after the request (revokeEntry).
      const next = freeze(left === 0 ? { ...cur, numUses: -1, revokePending: 'tree' } : { ...cur, numUses: left });
      await persist(next);
      return { entry: next, lastUse: left === 0 };
    });
  }

  async function renew(entry: TokenEntry, increment: number): Promise<{ entry: TokenEntry; warnings: string[] }> {
    if (entry.type === 'batch') throw badRequest('batch tokens cannot be renewed');
    if (!Number.isInteger(increment) || increment < 0) throw badRequest('increment: must be a non-negative number of seconds');
    if (!entry.renewable || entry.expireTime === 0) throw badRequest('lease is not renewable');
    // Asked before taking the lock: the issuing auth mount is a plugin call away.
    const login = entry.login && deps.renewLogin ? await deps.renewLogin(entry, increment) : null;
    if (login && !samePolicies(login.policies, entry.policies)) throw badRequest('policies have changed, not renewing');
    return withLock(entry.key, async () => {
      const cur = await loadRaw(entry.key);
      if (cur === null || !isLive(cur)) throw badRequest('token not found');
      if (!cur.renewable || cur.expireTime === 0) throw badRequest('lease is not renewable');
      const role = cur.role !== '' ? await readRole(cur.role, cur.namespaceId) : null;
      const period = login ? login.period : role !== null && role.tokenPeriod > 0 ? role.tokenPeriod : cur.period;
      const t = clock.now();
      const { ttl, warnings } = calculateTtl({
        increment,
        ttl: login && login.ttl > 0 ? login.ttl : cur.creationTtl,
        period,
        maxTtl: login && login.maxTtl > 0 ? login.maxTtl : role !== null ? role.tokenMaxTtl : cur.maxTtl,
        explicitMaxTtl: cur.explicitMaxTtl,
        startTime: cur.creationTime,
        now: t,
        ...sys,
      });
      const next = freeze({ ...cur, ttl, expireTime: t + ttl * 1000, lastRenewalTime: t });
      await persist(next, true);
      return { entry: next, warnings };
    });
  }

  // ---- revoke by id / accessor ----

  async function revoke(id: string): Promise<boolean> {
    if (id.startsWith(BATCH_PREFIX)) throw badRequest('batch tokens cannot be revoked');
    const e = await loadRaw(tokenKey(id));
    if (e === null) return false;
    await revokeTree(e.key);
    return true;
  }

  async function revokeEntry(entry: TokenEntry): Promise<void> {
    if (entry.type === 'batch') throw badRequest('batch tokens cannot be revoked');
    await revokeTree(entry.key);
  }

  async function revokeAccessor(accessor: string): Promise<boolean> {
    const key = await keyForAccessor(accessor);
    if (key === null) return false;
    await revokeTree(key);
    return true;
  }

  async function revokeOrphan(id: string): Promise<boolean> {
    if (id.startsWith(BATCH_PREFIX)) throw badRequest('batch tokens cannot be revoked');
    const key = tokenKey(id);
    if ((await loadRaw(key)) === null) return false;
    await revokeOrphanByKey(key);
    return true;
  }

  /** An accessor carries its token's namespace as a `.<id>` suffix (none for root). */
  const accessorInNamespace = (accessor: string, namespaceId: string) =>
    namespaceId === 'root' || namespaceId === '' ? !accessor.includes('.') : accessor.endsWith(`.${namespaceId}`);

  async function listAccessors(namespaceId = 'root'): Promise<string[]> {
    const out: string[] = [];
    for await (const { value } of deps.store.scan(ACCESSOR)) {
      const { accessor } = decode<{ accessor: string }>(value);
      if (accessorInNamespace(accessor, namespaceId)) out.push(accessor);
    }
    return out.sort();
  }

  async function revokeNamespace(namespaceId: string): Promise<number> {
    if (namespaceId === 'root' || namespaceId === '') throw badRequest('the root namespace cannot be emptied');
    let revoked = 0;
    for (const accessor of await listAccessors(namespaceId)) if (await revokeAccessor(accessor)) revoked++;
    return revoked;
  }

  // ---- roles ----

  async function writeRole(name: string, input: Partial<Omit<TokenRole, 'name'>>, namespaceId = 'root'): Promise<TokenRole> {
    if (!ROLE_NAME.test(name)) throw badRequest('role_name: letters, digits, "_", and "-" or "." inside');
    const role = mergeRole((await readRole(name, namespaceId)) ?? defaultRole(name), input);
    await deps.store.put(rolesFolder(namespaceId) + name, encode(role));
    return role;
  }

  async function deleteRole(name: string, namespaceId = 'root'): Promise<void> {
    await deps.store.delete(rolesFolder(namespaceId) + name);
  }

  async function listRoles(namespaceId = 'root'): Promise<string[]> {
    return (await deps.store.list(rolesFolder(namespaceId))).filter((k) => !k.endsWith('/'));
  }

  // ---- tidy ----

  async function tidy(): Promise<TidyResult> {
    const result: TidyResult = { revoked: 0, accessorsRemoved: 0, parentLinksRemoved: 0 };
    const entries: TokenEntry[] = [];
    for await (const { value } of deps.store.scan(ID)) entries.push(decode<TokenEntry>(value));
    const exists = new Set(entries.map((e) => e.key));

    for (const e of entries) {
      const dead = e.revokePending !== undefined || e.numUses === -1;
      const expired = e.expireTime !== 0 && e.expireTime <= clock.now();
      const parentGone = e.parent !== '' && !exists.has(e.parent);
      if (!dead && !expired && !parentGone) continue;
      try {
        if (dead) await resume(e);
        else await revokeTree(e.key);
        result.revoked++;
      } catch (err) {
        log.warn('tidy: revoking a token failed', { accessor: e.accessor, error: String(err) });
      }
    }

    const live = new Set<string>();
    for await (const key of deps.store.scanKeys(ID)) live.add(key.slice(ID.length));
    const stale: string[] = [];
    for await (const key of deps.store.scanKeys(PARENT)) {
      const [parentKey = '', childKey = ''] = key.slice(PARENT.length).split('/');
      if (!live.has(parentKey) || !live.has(childKey)) stale.push(key);
    }
    for (const k of stale) await deps.store.delete(k);
    result.parentLinksRemoved = stale.length;

    const dangling: string[] = [];
    for await (const { key, value } of deps.store.scan(ACCESSOR)) {
      if (!live.has(decode<{ tokenKey: string }>(value).tokenKey)) dangling.push(key);
    }
    for (const k of dangling) await deps.store.delete(k);
    result.accessorsRemoved = dangling.length;
    if (result.revoked || stale.length || dangling.length) log.info('token tidy done', { ...result });
    return result;
  }

  // ---- checks and rendering ----

  function checkCidr(entry: TokenEntry, remoteAddr: string): boolean {
    if (entry.boundCidrs.length === 0) return true;
    // As Vault: a non-expiring root token is never CIDR-bound, so an operator cannot lock themselves out.
    if (entry.expireTime === 0 && entry.policies.includes('root')) return true;
    let list = cidrLists.get(entry);
    if (list === undefined) {
      list = buildBlockList(entry.boundCidrs);
      cidrLists.set(entry, list);
    }
    return addressAllowed(list, remoteAddr);
  }

  async function resumeRevocations(): Promise<void> {
    const keys: string[] = [];
    for await (const key of deps.store.scanKeys(PENDING)) keys.push(key.slice(PENDING.length));
    for (const key of keys) {
      const e = await loadRaw(key);
      try {
        if (e === null) await deps.store.delete(PENDING + key);
        else await resume(e);
      } catch (err) {
        log.warn('resuming a pending token revocation failed; tidy will retry', { accessor: e?.accessor, error: String(err) });
      }
    }
  }

  async function countTokens(): Promise<Array<{ type: string; namespaceId: string; count: number }>> {
    const counts = new Map<string, { type: string; namespaceId: string; count: number }>();
    for await (const { value } of deps.store.scan(ID)) {
      const e = decode<TokenEntry>(value);
      const k = `${e.type}\u0000${e.namespaceId}`;
      const c = counts.get(k) ?? { type: e.type, namespaceId: e.namespaceId, count: 0 };
      c.count++;
      counts.set(k, c);
    }
    return [...counts.values()];
  }

  return {
    tokenKey,
    leaseIndexKey: (entry) => (entry.type === 'batch' ? entry.parent : entry.key),
    create,
    createRoot,
    createFromLogin,
    createWrapping,
    lookup,
    isLiveKey: async (key) => {
      const e = await loadRaw(key);
      return e !== null && isLive(e);
    },
    lookupByAccessor,
    useToken,
    renew,
    revoke,
    revokeEntry,
    revokeAccessor,
    revokeOrphan,
    listAccessors,
    revokeNamespace,
    revokeLeased: async (key) => {
      // The lease is the authority on expiry: it fell due (or was revoked), so the token goes.
      await revokeTree(key);
    },
    readRole,
    writeRole,
    deleteRole,
    listRoles,
    tidy,
    checkCidr,
    lookupResponse: (entry, id) => renderLookup(entry, clock.now(), id),
    authBlock: (entry, id, identityPolicies) => renderAuth(entry, id, clock.now(), identityPolicies),
    roleResponse: renderRole,
    resumeRevocations,
    countTokens,
    clearCache: () => cache.clear(),
    invalidate: (storageKey) => {
      if (storageKey.startsWith(ID)) cache.drop(storageKey.slice(ID.length));
    },
  };
}
