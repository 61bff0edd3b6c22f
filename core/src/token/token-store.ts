/**
 * The token store: creation, lookup, use counting, renewal, revocation and
 * expiry of client tokens, and token-store roles.
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
import type { AuthSpec, Logger } from '@strongroom/sdk-plugin/host';
import { addressAllowed, badRequest, buildBlockList, createKeyedMutex, createReadCache, permissionDenied, validateCidrs } from '@strongroom/sdk-plugin/host';
import { namespaceStoragePrefix } from '../namespace/namespaces.js';
import type { Physical, PhysicalOp } from '../storage/physical.js';
import { tokenLeaseId } from '../expiration/lease-entry.js';
import type { TokenLease } from '../expiration/types.js';
import { RESPONSE_WRAPPING_POLICY_NAME } from '../policy/policy.js';
import {
  BATCH_PREFIX,
  decryptBatchToken,
  encryptBatchToken,
  hmacHex,
  newAccessor,
  newServiceTokenId,
} from './ids.js';
import { isSubset, matchesAnyGlob, sanitizePolicies } from './policies.js';
import { renderAuth, renderLookup, renderRole } from './render.js';
import { defaultRole, mergeRole, ROLE_NAME } from './roles.js';
import { calculateTtl } from './ttl.js';
import type { CreatedToken, CreateTokenRequest, PendingRevocation, TokenEntry, TokenRole, TokenType } from './types.js';
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

export interface TokenStoreDeps {
  /** The barrier's secure store: values written here are encrypted by it. */
  store: Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'batch' | 'scan' | 'scanKeys'>;
  /** Keys token ids and accessors into storage keys (HMAC-SHA256). */
  hmacKey: Buffer;
  /** 32-byte AES-256-GCM key sealing batch tokens. */
  batchKey: Buffer;
  clock?: { now(): number };
  /** Seconds. */
  systemDefaultTtl: number;
  systemMaxTtl: number;
  /**
   * The expiration manager: revokes a token's secret leases, and holds an expiring token's own
   * lease. Null only while init makes the root token (which never expires).
   */
  leases: TokenLeases | null;
  /** The mount a token's creation path falls under (its lease is grouped and reported by it). */
  mountOf?(path: string, namespaceId: string): { path: string; uuid: string } | undefined;
  /** Called as a token is destroyed, before its entry goes (response wrapping drops the wrapped response here). */
  onDestroy?(entry: TokenEntry): Promise<void>;
  /**
   * Asks the auth mount that issued a login token (entry.login) whether it may
   * be renewed; throws to refuse. Without it such tokens renew as any other.
   */
  renewLogin?(entry: TokenEntry, increment: number): Promise<LoginRenewal>;
  logger: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Entries kept decrypted in memory (default 10,000). */
  cacheSize?: number;
}

/** What the token store asks of the expiration manager. */
export interface TokenLeases {
  revokeByToken(tokenKey: string): Promise<unknown>;
  putTokenLease(lease: TokenLease, ops: readonly PhysicalOp[]): Promise<void>;
  dropTokenLease(leaseId: string, ops: readonly PhysicalOp[]): Promise<void>;
}

/** An auth mount's answer to a renewal of its login token (seconds; ttl/maxTtl 0: keep the token's). */
export interface LoginRenewal {
  ttl: number;
  maxTtl: number;
  period: number;
  policies: readonly string[];
}

/** What a login response (AuthSpec) needs beyond itself to become a token. */
export interface LoginContext {
  /** Uuid of the auth mount that answered the login; its renew handler re-checks renewals. */
  mountUuid?: string;
  /** Request path, e.g. "auth/approle/login". */
  path: string;
  /** Mount path with trailing slash, e.g. "auth/approle/". */
  mountPath: string;
  namespaceId?: string;
  /** The mount's tuned default and max lease TTLs in seconds (0: system). */
  mountDefaultTtl?: number;
  mountMaxTtl?: number;
  /** Mount default token type when the AuthSpec leaves it empty. */
  mountTokenType?: TokenType;
  entityId?: string;
  /** Accessor of the auth mount: with the AuthSpec's alias name it makes the token's login alias. */
  mountAccessor?: string;
}

export interface TidyResult {
  revoked: number;
  accessorsRemoved: number;
  parentLinksRemoved: number;
}

export interface TokenStore {
  /** The storage / lease-index key of a token id: HMAC-SHA256 hex. */
  tokenKey(id: string): string;
  /** Key under which a token's leases are indexed: batch tokens use their parent's ('' for an orphan batch token). */
  leaseIndexKey(entry: TokenEntry): string;
  create(parent: TokenEntry | null, req: CreateTokenRequest): Promise<CreatedToken>;
  createRoot(customId?: string): Promise<CreatedToken>;
  createFromLogin(auth: AuthSpec, ctx: LoginContext): Promise<CreatedToken>;
  /**
   * A response-wrapping token: orphan, single use, not renewable, policy
   * `response-wrapping` only, expiring after `ttl` seconds.
   */
  createWrapping(opts: { ttl: number; path: string; namespaceId: string }): Promise<CreatedToken>;
  lookup(id: string): Promise<TokenEntry | null>;
  /** Whether the token with this key (HMAC) exists and is live: for lease tidy, which knows only keys. */
  isLiveKey(key: string): Promise<boolean>;
  lookupByAccessor(accessor: string): Promise<TokenEntry | null>;
  useToken(entry: TokenEntry): Promise<{ entry: TokenEntry; lastUse: boolean } | null>;
  renew(entry: TokenEntry, increment: number): Promise<{ entry: TokenEntry; warnings: string[] }>;
  /** Revokes the token and its whole subtree. False when no such token. */
  revoke(id: string): Promise<boolean>;
  revokeEntry(entry: TokenEntry): Promise<void>;
  revokeAccessor(accessor: string): Promise<boolean>;
  /** Revokes only this token; its children become orphans. */
  revokeOrphan(id: string): Promise<boolean>;
  /** Accessors of the tokens of one namespace (its id is the accessor's suffix). */
  listAccessors(namespaceId?: string): Promise<string[]>;
  /** Revokes every token of a namespace being deleted, with their subtrees; returns how many roots were revoked. */
  revokeNamespace(namespaceId: string): Promise<number>;
  /** Revokes the token of an expiration-manager lease that fell due or was revoked (nothing when it is gone). */
  revokeLeased(tokenKey: string): Promise<void>;
  /** Roles of one namespace (default: root). */
  readRole(name: string, namespaceId?: string): Promise<TokenRole | null>;
  writeRole(name: string, input: Partial<Omit<TokenRole, 'name'>>, namespaceId?: string): Promise<TokenRole>;
  deleteRole(name: string, namespaceId?: string): Promise<void>;
  listRoles(namespaceId?: string): Promise<string[]>;
  tidy(): Promise<TidyResult>;
  checkCidr(entry: TokenEntry, remoteAddr: string): boolean;
  lookupResponse(entry: TokenEntry, id?: string): Record<string, unknown>;
  authBlock(entry: TokenEntry, id: string, identityPolicies?: readonly string[]): Record<string, unknown>;
  roleResponse(role: TokenRole): Record<string, unknown>;
  /** At unseal: finishes the revocations a crash cut short (from the pending index, no scan of the tokens). */
  resumeRevocations(): Promise<void>;
  /** Stored tokens by type and namespace id (a full scan: callers cache it). */
  countTokens(): Promise<Array<{ type: string; namespaceId: string; count: number }>>;
  /** Drops the in-memory cache (after another node wrote storage, e.g. on becoming active). */
  clearCache(): void;
}

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

/** Vault's display-name rule: "token-<name>" with anything but [A-Za-z0-9-] replaced by "-". */
function tokenDisplayName(name: string | undefined): string {
  if (name === undefined || name === '') return 'token';
  return `token-${name}`.replace(/[^a-zA-Z0-9-]/g, '-').replace(/-+$/, '');
}

const CUSTOM_ID = /^[A-Za-z0-9_-]{1,128}$/;

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

  /** Writes `ops`, with the token's lease when `leased` (its expiry or renewal changed). */
  function write(e: TokenEntry, ops: PhysicalOp[], leased: boolean): Promise<void> {
    return cache.write(e.key, () => (leased && deps.leases && hasLease(e) ? deps.leases.putTokenLease(leaseOf(e), ops) : deps.store.batch(ops)));
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

  async function issue(fields: Omit<TokenEntry, 'key' | 'accessor'>, customId?: string): Promise<CreatedToken> {
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
    await write(entry, ops, true);
    log.debug('token created', { accessor, path: entry.path, policies: entry.policies });
    return { id, entry, warnings: [] };
  }

  function checkCustomId(id: string): void {
    if (!CUSTOM_ID.test(id)) throw badRequest('id: custom token ids use 1-128 characters of [A-Za-z0-9_-]');
  }

  // Role names are case-sensitive (as in Vault): the name stored is the name in the
  // request path, so an ACL rule on auth/token/roles/<name> or create/<name> covers
  // every way to reach that role. (Lower-casing here let `PRIVILEGED` bypass a deny on `privileged`.)
  async function readRole(name: string, namespaceId = 'root'): Promise<TokenRole | null> {
    const raw = await deps.store.get(rolesFolder(namespaceId) + name);
    return raw === null ? null : decode<TokenRole>(raw);
  }

  function resolvePolicies(
    parentPolicies: readonly string[],
    requested: readonly string[],
    noDefault: boolean,
    sudo: boolean,
    role: TokenRole | null,
  ): string[] {
    const fromParent = (): string[] => {
      if (requested.length === 0) {
        const inherited = [...parentPolicies];
        return noDefault ? inherited.filter((p) => p !== 'default') : inherited;
      }
      if (sudo) return sanitizePolicies(requested, !noDefault);
      const asked = sanitizePolicies(requested, false);
      if (!isSubset(sanitizePolicies(parentPolicies, false), asked)) {
        throw badRequest('policies: child policies must be subset of parent');
      }
      // A child gets `default` only if its parent has it.
      return sanitizePolicies(requested, !noDefault && parentPolicies.includes('default'));
    };
    if (role === null) return fromParent();

    let policies: string[];
    if (role.allowedPolicies.length > 0 || role.allowedPoliciesGlob.length > 0) {
      // A role's allowed list replaces the parent-subset rule (Vault token roles).
      const allowed = sanitizePolicies(role.allowedPolicies, !noDefault);
      if (requested.length === 0) {
        policies = allowed;
      } else {
        policies = sanitizePolicies(requested, !noDefault);
        const outside = policies.filter((p) => !allowed.includes(p) && !matchesAnyGlob(role.allowedPoliciesGlob, p));
        if (outside.length) {
          throw badRequest(`policies: token policies (${outside.join(', ')}) must be subset of the role's allowed policies`);
        }
      }
    } else {
      policies = fromParent();
    }
    const isDisallowed = (p: string): boolean =>
      role.disallowedPolicies.includes(p) || matchesAnyGlob(role.disallowedPoliciesGlob, p);
    if (requested.length > 0) {
      const bad = policies.filter(isDisallowed);
      if (bad.length) throw badRequest(`policies: token policies contain disallowed policies (${bad.join(', ')})`);
      return policies;
    }
    return policies.filter((p) => !isDisallowed(p));
  }

  async function create(parent: TokenEntry | null, req: CreateTokenRequest): Promise<CreatedToken> {
    const t = clock.now();
    const warnings: string[] = [];
    const parentPolicies: readonly string[] = parent === null ? ['root'] : parent.policies;
    const parentIsRoot = parentPolicies.includes('root');
    const sudo = parentIsRoot || req.callerHasSudo === true;
    const namespaceId = req.namespaceId ?? parent?.namespaceId ?? 'root';

    if (parent !== null && (!isLive(parent) || inFlight.has(parent.key))) throw permissionDenied('parent token is not valid');

    let role: TokenRole | null = null;
    if (req.roleName !== undefined) {
      role = await readRole(req.roleName, namespaceId);
      if (role === null) throw badRequest(`role_name: unknown role ${req.roleName}`);
    }

    let type: TokenType = req.type ?? 'service';
    if (role !== null) {
      if (role.tokenType === 'service' || role.tokenType === 'batch') {
        if (req.type !== undefined && req.type !== role.tokenType) {
          throw badRequest(`type: role ${role.name} only issues ${role.tokenType} tokens`);
        }
        type = role.tokenType;
      } else {
        type = req.type ?? (role.tokenType === 'default-batch' ? 'batch' : 'service');
      }
    }

    let orphan = parent === null || req.orphanEndpoint === true || role?.orphan === true;
    if (req.noParent === true) {
      if (!sudo) throw badRequest('root or sudo privileges required to create orphan token'); // 400, as Vault answers it
      orphan = true;
    }
    if (!orphan && parent?.type === 'batch') throw badRequest('batch tokens cannot create child tokens');
    // Vault's rule: a use-limited token creates no token at all, orphan or not
    // (create-orphan and a role with orphan=true skipped the check before).
    if (parent !== null && parent.numUses !== 0) {
      throw badRequest('a token with a limited use count cannot create tokens');
    }

    if (req.id !== undefined) {
      if (!sudo) throw permissionDenied('root or sudo privileges required to specify token id');
      if (type === 'batch') throw badRequest('id: batch tokens cannot have a custom id');
      checkCustomId(req.id);
    }

    let numUses = req.numUses ?? 0;
    if (!Number.isInteger(numUses) || numUses < 0) throw badRequest('num_uses: number of uses cannot be negative');
    if (role !== null && role.tokenNumUses > 0 && (numUses === 0 || role.tokenNumUses < numUses)) numUses = role.tokenNumUses;
    if (type === 'batch' && numUses > 0) throw badRequest('num_uses: batch tokens cannot have a use limit');

    const noDefault = req.noDefaultPolicy === true || role?.tokenNoDefaultPolicy === true;
    const policies = resolvePolicies(parentPolicies, req.policies ?? [], noDefault, sudo, role);
    if (policies.includes('root')) {
      if (!parentIsRoot) throw permissionDenied('root tokens may not be created without parent token being root');
      if (type === 'batch') throw badRequest('type: batch tokens cannot be root tokens');
    }

    if (req.entityAlias !== undefined) {
      if (role === null || !matchesAnyGlob(role.allowedEntityAliases, req.entityAlias)) {
        throw badRequest('entity_alias: invalid or not allowed by the role');
      }
      throw badRequest('entity_alias: identity entities are not supported');
    }

    let explicitMaxTtl = req.explicitMaxTtl ?? 0;
    if (role !== null && role.tokenExplicitMaxTtl > 0) {
      if (explicitMaxTtl === 0) explicitMaxTtl = role.tokenExplicitMaxTtl;
      else {
        explicitMaxTtl = Math.min(explicitMaxTtl, role.tokenExplicitMaxTtl);
        warnings.push(`explicit max TTL specified both during creation call and in role; using the lesser value of ${explicitMaxTtl} seconds`);
      }
    }

    let period = req.period ?? 0;
    if (period > 0 && !sudo && !(role !== null && role.tokenPeriod > 0)) {
      throw permissionDenied('root or sudo privileges required to create periodic token');
    }
    if (role !== null && role.tokenPeriod > 0) period = role.tokenPeriod;
    if (type === 'batch' && period > 0) throw badRequest('period: batch tokens cannot be periodic');

    let renewable = (req.renewable ?? true) && role?.renewable !== false && type === 'service';
    const maxTtl = role?.tokenMaxTtl ?? 0;
    let ttl = req.ttl ?? 0;
    if (ttl === 0 && role !== null) ttl = role.tokenTtl;
    const isRootToken = policies.length === 1 && policies[0] === 'root';
    if (period > 0 || ttl > 0 || !isRootToken) {
      const r = calculateTtl({ increment: 0, ttl, period, maxTtl, explicitMaxTtl, startTime: t, now: t, ...sys });
      ttl = r.ttl;
      warnings.push(...r.warnings);
    }
    if (ttl === 0 && explicitMaxTtl > 0) ttl = explicitMaxTtl;
    if (ttl === 0) {
      if (parent !== null && parent.expireTime !== 0) {
        throw badRequest('expiring root tokens cannot create non-expiring root tokens');
      }
      renewable = false;
    }
    // A child cannot outlive its parent: the parent's expiry revokes the whole subtree anyway.
    if (!orphan && parent !== null && parent.expireTime !== 0) {
      const left = Math.floor((parent.expireTime - t) / 1000);
      if (left <= 0) throw permissionDenied('parent token is not valid');
      if (ttl > left) {
        warnings.push(`TTL of ${ttl}s exceeded the parent token's remaining TTL of ${left}s; TTL value is capped accordingly`);
        ttl = left;
      }
    }

    const suffix = role !== null ? `${role.name}${role.pathSuffix ? `/${role.pathSuffix}` : ''}` : '';
    const path = role !== null ? `auth/token/create/${suffix}` : req.orphanEndpoint ? 'auth/token/create-orphan' : 'auth/token/create';

    const created = await issue(
      {
        parent: orphan || parent === null ? '' : parent.key,
        policies,
        path,
        meta: { ...(req.meta ?? {}) },
        displayName: tokenDisplayName(req.displayName),
        numUses,
        creationTime: t,
        creationTtl: ttl,
        ttl,
        explicitMaxTtl,
        period,
        maxTtl,
        expireTime: ttl === 0 ? 0 : t + ttl * 1000,
        lastRenewalTime: 0,
        type,
        renewable,
        boundCidrs: [...(role?.tokenBoundCidrs ?? [])],
        entityId: '',
        namespaceId,
        role: role?.name ?? '',
        // The creator's identity, never the request's meta: identity templates must not be fed by the caller.
        ...(parent?.alias ? { alias: parent.alias } : {}),
      },
      req.id,
    );
    // The parent may have been revoked while the child was being written: the child must not outlive it.
    if (created.entry.parent !== '' && (revoking.has(created.entry.parent) || (await loadRaw(created.entry.parent)) === null)) {
      if (created.entry.type === 'service') await revokeTree(created.entry.key);
      throw permissionDenied('parent token is not valid');
    }
    return { ...created, warnings };
  }

  async function createRoot(customId?: string): Promise<CreatedToken> {
    if (customId !== undefined) checkCustomId(customId);
    return issue(
      {
        parent: '',
        policies: ['root'],
        path: 'auth/token/root',
        meta: {},
        displayName: 'root',
        numUses: 0,
        creationTime: clock.now(),
        creationTtl: 0,
        ttl: 0,
        explicitMaxTtl: 0,
        period: 0,
        maxTtl: 0,
        expireTime: 0,
        lastRenewalTime: 0,
        type: 'service',
        renewable: false,
        boundCidrs: [],
        entityId: '',
        namespaceId: 'root',
        role: '',
      },
      customId,
    );
  }

  async function createWrapping(opts: { ttl: number; path: string; namespaceId: string }): Promise<CreatedToken> {
    const t = clock.now();
    return issue({
      parent: '',
      policies: [RESPONSE_WRAPPING_POLICY_NAME],
      path: opts.path,
      meta: {},
      displayName: '',
      numUses: 1,
      creationTime: t,
      creationTtl: opts.ttl,
      ttl: opts.ttl,
      explicitMaxTtl: 0,
      period: 0,
      maxTtl: 0,
      expireTime: t + opts.ttl * 1000,
      lastRenewalTime: 0,
      type: 'service',
      renewable: false,
      boundCidrs: [],
      entityId: '',
      namespaceId: opts.namespaceId,
      role: '',
    });
  }

  async function createFromLogin(auth: AuthSpec, ctx: LoginContext): Promise<CreatedToken> {
    const t = clock.now();
    const policies = sanitizePolicies(auth.policies, !auth.noDefaultPolicy);
    if (policies.includes('root')) throw permissionDenied('auth methods cannot create root tokens');
    const type: TokenType = auth.tokenType === 'batch' || auth.tokenType === 'service' ? auth.tokenType : (ctx.mountTokenType ?? 'service');
    if (type === 'batch' && (auth.numUses > 0 || auth.period > 0)) {
      throw badRequest('batch tokens cannot be periodic or have a use limit');
    }
    const maxTtl = auth.maxTtl > 0 ? auth.maxTtl : (ctx.mountMaxTtl ?? 0);
    const { ttl, warnings } = calculateTtl({
      increment: 0,
      ttl: auth.ttl > 0 ? auth.ttl : (ctx.mountDefaultTtl ?? 0),
      period: auth.period,
      maxTtl,
      explicitMaxTtl: auth.explicitMaxTtl,
      startTime: t,
      now: t,
      ...sys,
    });
    const source = ctx.mountPath.replace(/^auth\//, '').replace(/\//g, '-');
    const created = await issue({
      parent: '',
      policies,
      path: ctx.path,
      meta: { ...auth.metadata },
      displayName: `${source}${auth.displayName}`.replace(/-+$/, ''),
      numUses: auth.numUses,
      creationTime: t,
      creationTtl: ttl,
      ttl,
      explicitMaxTtl: auth.explicitMaxTtl,
      period: auth.period,
      maxTtl,
      expireTime: t + ttl * 1000,
      lastRenewalTime: 0,
      type,
      renewable: auth.renewable && type === 'service',
      boundCidrs: validateCidrs(auth.boundCidrs, 'token_bound_cidrs'),
      entityId: ctx.entityId ?? '',
      namespaceId: ctx.namespaceId ?? 'root',
      role: '',
      ...(auth.aliasName && ctx.mountAccessor ? { alias: { mountAccessor: ctx.mountAccessor, name: auth.aliasName, metadata: { ...auth.metadata } } } : {}),
      // Batch tokens carry their entry inside the token and are never renewed.
      ...(type === 'service' && ctx.mountUuid ? { login: { mountUuid: ctx.mountUuid, internalData: { ...auth.internalData } } } : {}),
    });
    return { ...created, warnings };
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
  };
}
