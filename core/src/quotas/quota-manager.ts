/**
 * Resource quotas (Vault's `sys/quotas/*`): rate-limit and lease-count rules, stored in the
 * barrier under the namespace that wrote them (`<namespace prefix>sys/quotas/<type>/<name>`) and
 * held in memory as two indexes (rules.ts), and `sys/quotas/config` in the root namespace.
 *
 * Rate limits are checked by the pipeline before a request does anything else (rate-limiter.ts).
 *
 * Lease counts are exact under concurrency: a request that may create a lease reserves a place
 * under its rule first (one synchronous check-and-increment, refused with 429 when count plus
 * reservations reach `max_leases`), then runs inside the reservation's async context; the lease
 * the request creates takes the reservation's place the moment the expiration manager holds it
 * (`leaseHeld`), and a request that ends without a lease gives its place back. The counts
 * themselves are the leases the expiration manager holds, matched to rules as they come and go;
 * they are recounted from its table when the rules change and rebuilt by its restore at every
 * unseal or HA takeover (reservations wait for that restore to finish), so a restart or a
 * failover loses nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { badRequest, StrongroomError } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { Metrics } from '../metrics/metrics.js';
import type { MountBinding } from '../mounts/mount-manager.js';
import type { Router } from '../mounts/mount-table.js';
import { ROOT_NAMESPACE, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { Physical } from '../storage/physical.js';
import { createRateLimiter, type RateDecision } from './rate-limiter.js';
import { indexRules, sameTarget, storedLeaseCountSchema, storedRateLimitSchema, type LeaseCountRule, type QuotaRequest, type QuotaRule, type QuotaTarget, type QuotaType, type RateLimitRule, type RuleIndex } from './rules.js';

/** Vault's default `rate_limit_exempt_paths`. */
const DEFAULT_EXEMPT_PATHS = Object.freeze([
  'sys/generate-recovery-token/attempt',
  'sys/generate-recovery-token/update',
  'sys/generate-root/attempt',
  'sys/generate-root/update',
  'sys/health',
  'sys/seal-status',
  'sys/unseal',
]);

const configSchema = z.object({
  enableRateLimitAuditLogging: z.boolean(),
  enableRateLimitResponseHeaders: z.boolean(),
  rateLimitExemptPaths: z.array(z.string()),
});
export type QuotaConfig = z.infer<typeof configSchema>;

const CONFIG_KEY = 'sys/quotas/config';
const folder = (prefix: string, type: QuotaType) => `${prefix}sys/quotas/${type}/`;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A lease held by the expiration manager, as its hooks name it. */
export interface HeldLease {
  /** '' or 'root' for the root namespace. */
  namespaceId: string;
  mountPath: string;
  /** The login role it was counted under (stored with the lease), when a rule named one. */
  role?: string;
}

export interface QuotaDeps {
  store: Pick<Physical, 'get' | 'put' | 'delete' | 'list'>;
  namespaces: NamespaceRegistry;
  router: Pick<Router<MountBinding>, 'match'>;
  metrics: Metrics;
  namespaceLabel(id: string): string;
  /** Every lease the expiration manager holds (a recount after the rules change). */
  eachLease(fn: (leaseId: string, lease: HeldLease) => void): void;
  /** Resolves once the leases stored at unseal are all held (counts are exact from then on). */
  leasesRestored(): Promise<void>;
  now?: () => number;
}

/** What a write of a rule carries once its fields are parsed. */
export type RuleInput =
  | { type: 'rate-limit'; name: string; path: string; role: string; rate: number; interval: number; blockInterval: number }
  | { type: 'lease-count'; name: string; path: string; role: string; maxLeases: number };

/** A place reserved under a lease-count rule for the duration of one request. */
export interface LeaseReservation {
  /** Runs the request's work; the first lease it creates takes the reserved place. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Gives the place back unless a lease took it; answers a warning when the rule is at 90 % or more. */
  release(): string | null;
}

interface Ticket {
  key: string;
  consumed: boolean;
  /** The rule's role when it names one: the lease records it. */
  role: string;
}

export type QuotaManager = ReturnType<typeof createQuotaManager>;

export function createQuotaManager(deps: QuotaDeps) {
  const { store, namespaces, metrics } = deps;
  const now = deps.now ?? Date.now;
  const limiter = createRateLimiter(now);
  let config: QuotaConfig = { enableRateLimitAuditLogging: false, enableRateLimitResponseHeaders: false, rateLimitExemptPaths: [...DEFAULT_EXEMPT_PATHS] };
  let exempt = exemptMatcher(config.rateLimitExemptPaths);
  const rules = { 'rate-limit': new Map<string, RateLimitRule>(), 'lease-count': new Map<string, LeaseCountRule>() };
  let rateIndex: RuleIndex<RateLimitRule> = indexRules([]);
  let leaseIndex: RuleIndex<LeaseCountRule> = indexRules([]);
  const counts = new Map<string, number>();
  const reserved = new Map<string, number>();
  const tickets = new AsyncLocalStorage<Ticket>();
  /** The held leases counted under a role (few: logins through a role with a rule), so a drop or recount finds their rule. */
  const roleOf = new Map<string, string>();
  /**
   * Set once this node is the one that creates leases. A warm HA standby follows the rules but
   * creates no lease (its writes go to the active node, which reserves), and holds no lease to count.
   */
  let active = false;

  const ruleKey = (r: Pick<QuotaRule, 'ownerNamespaceId' | 'name'>) => `${r.ownerNamespaceId}\u0000${r.name}`;
  const nsId = (id: string) => (id === '' ? ROOT_NAMESPACE.id : id);
  const labels = (r: QuotaRule) => ({ name: r.name, namespace: deps.namespaceLabel(r.ownerNamespaceId) });

  /** The lease-count rule a held lease counts under. */
  const leaseRule = (leaseId: string, lease: HeldLease): LeaseCountRule | null => {
    const path = leaseId.slice(0, Math.max(0, leaseId.lastIndexOf('/')));
    const role = lease.role ?? roleOf.get(leaseId);
    return leaseIndex.find({ namespaceId: nsId(lease.namespaceId), mountPath: lease.mountPath, path: path.slice(lease.mountPath.length), ...(role ? { role } : {}) });
  };

  function recount(): void {
    counts.clear();
    if (leaseIndex.all().length === 0) return;
    deps.eachLease((id, lease) => {
      const r = leaseRule(id, lease);
      if (r) counts.set(ruleKey(r), (counts.get(ruleKey(r)) ?? 0) + 1);
    });
  }

  function reindex(type: QuotaType): void {
    if (type === 'rate-limit') rateIndex = indexRules([...rules['rate-limit'].values()]);
    else {
      leaseIndex = indexRules([...rules['lease-count'].values()]);
      recount();
    }
  }

  const parseStored = (type: QuotaType, bytes: Uint8Array): QuotaRule =>
    (type === 'rate-limit' ? storedRateLimitSchema : storedLeaseCountSchema).parse(JSON.parse(Buffer.from(bytes).toString('utf8')));

  /** Where a rule's path points, seen from the namespace that writes it. */
  function resolveTarget(owner: Namespace, input: RuleInput): QuotaTarget {
    let path = input.path.replace(/^\/+/, '');
    // "team" names the namespace "team/" as well (no mount there by that name).
    if (path !== '' && !path.endsWith('/') && !path.endsWith('*') && namespaces.byPath(owner.path + path) && !deps.router.match(owner.id, path)) path += '/';
    const { namespace, path: rest } = namespaces.resolve(owner.path + path);
    if (rest === '') {
      if (input.role) throw badRequest('role: a role needs a path naming an auth mount');
      return { namespaceId: namespace.id, mountPath: '', suffix: '', glob: false, role: '' };
    }
    const glob = rest.endsWith('*');
    const bare = glob ? rest.slice(0, -1) : rest;
    if (bare.includes('*')) throw badRequest('path: "*" may only end the path');
    const match = deps.router.match(namespace.id, bare);
    if (!match) throw badRequest(`path: no mount or namespace at "${input.path}"`);
    // A prefix keeps its slashes ("creds/" matches "creds/x", not "credsx"); an exact path drops a trailing one.
    const below = bare.length > match.mountPath.length ? bare.slice(match.mountPath.length) : '';
    const suffix = glob ? below : below.replace(/\/+$/, '');
    return { namespaceId: namespace.id, mountPath: match.mountPath, suffix, glob: glob && suffix !== '', role: checkRole(input, match.entry.table, match.mountPath, suffix) };
  }

  function checkRole(input: RuleInput, table: string, mountPath: string, suffix: string): string {
    if (!input.role) return '';
    if (table !== 'auth' || suffix !== '' || mountPath === 'auth/token/') throw badRequest('role: a role needs a path naming an auth mount with roles (no path below it)');
    return input.role;
  }

  async function removeRule(type: QuotaType, owner: Namespace, name: string): Promise<void> {
    if (!NAME.test(name)) return;
    await store.delete(folder(namespaces.storagePrefix(owner), type) + name);
    const key = ruleKey({ ownerNamespaceId: owner.id, name });
    if (rules[type].delete(key)) {
      if (type === 'rate-limit') limiter.forget(key);
      else {
        metrics.quotaLeaseCount.remove({ name, namespace: deps.namespaceLabel(owner.id) });
        metrics.quotaLeaseCountMax.remove({ name, namespace: deps.namespaceLabel(owner.id) });
      }
      reindex(type);
    }
  }

  function rejectRate(rule: RateLimitRule): void {
    metrics.quotaRateLimitViolations.inc(labels(rule));
  }

  return {
    /** Reads every namespace's rules and the config (unseal). */
    async load(): Promise<void> {
      const raw = await store.get(CONFIG_KEY);
      if (raw) {
        config = configSchema.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
        exempt = exemptMatcher(config.rateLimitExemptPaths);
      }
      for (const ns of namespaces.all()) {
        const prefix = namespaces.storagePrefix(ns);
        for (const type of ['rate-limit', 'lease-count'] as const) {
          for (const name of await store.list(folder(prefix, type))) {
            const bytes = await store.get(folder(prefix, type) + name);
            if (!bytes) continue;
            const rule = parseStored(type, bytes);
            (rules[type] as Map<string, QuotaRule>).set(ruleKey(rule), rule);
          }
        }
      }
      reindex('rate-limit');
      reindex('lease-count');
    },

    config: (): QuotaConfig => ({ ...config, rateLimitExemptPaths: [...config.rateLimitExemptPaths] }),

    async setConfig(next: QuotaConfig): Promise<void> {
      const clean = { ...next, rateLimitExemptPaths: next.rateLimitExemptPaths.map(normalizeExempt).filter((p) => p !== '') };
      await store.put(CONFIG_KEY, Buffer.from(JSON.stringify(clean)));
      config = clean;
      exempt = exemptMatcher(clean.rateLimitExemptPaths);
    },

    list(type: QuotaType, owner: Namespace): string[] {
      return [...rules[type].values()].filter((r) => r.ownerNamespaceId === owner.id).map((r) => r.name).sort();
    },

    /** The rule as sys/quotas reads it (with the current count for a lease-count rule). */
    read(type: QuotaType, owner: Namespace, name: string): Record<string, unknown> | null {
      const r = rules[type].get(ruleKey({ ownerNamespaceId: owner.id, name }));
      if (!r) return null;
      const common = { name: r.name, path: r.path, role: r.role, type: r.type, inheritable: r.target.namespaceId === ROOT_NAMESPACE.id && r.target.mountPath === '' };
      if (r.type === 'rate-limit') return { ...common, rate: r.rate, interval: r.interval, block_interval: r.blockInterval };
      return { ...common, max_leases: r.maxLeases, ...(active ? { counter: counts.get(ruleKey(r)) ?? 0 } : {}) };
    },

    async write(owner: Namespace, input: RuleInput): Promise<void> {
      if (!NAME.test(input.name)) throw badRequest('name: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit');
      const target = resolveTarget(owner, input);
      const key = ruleKey({ ownerNamespaceId: owner.id, name: input.name });
      for (const [k, other] of rules[input.type] as Map<string, QuotaRule>) {
        if (k !== key && sameTarget(other.target, target)) throw badRequest(`path: quota "${other.name}" already applies to this path${target.role ? ' and role' : ''}`);
      }
      const base = { name: input.name, path: input.path, role: input.role, ownerNamespaceId: owner.id, target };
      const rule: QuotaRule =
        input.type === 'rate-limit'
          ? storedRateLimitSchema.parse({ ...base, type: 'rate-limit', rate: input.rate, interval: input.interval, blockInterval: input.blockInterval })
          : storedLeaseCountSchema.parse({ ...base, type: 'lease-count', maxLeases: input.maxLeases });
      await store.put(folder(namespaces.storagePrefix(owner), input.type) + input.name, Buffer.from(JSON.stringify(rule)));
      (rules[input.type] as Map<string, QuotaRule>).set(key, rule);
      if (input.type === 'rate-limit') limiter.forget(key);
      reindex(input.type);
    },

    remove: removeRule,

    /** This node creates leases from now on (an unseal, or an HA takeover). */
    activate(): void {
      active = true;
    },

    /** A rule or the config changed on another node (HA change feed): read it again. */
    async invalidate(storageKey: string): Promise<void> {
      if (storageKey === CONFIG_KEY) {
        const raw = await store.get(CONFIG_KEY);
        config = raw ? configSchema.parse(JSON.parse(Buffer.from(raw).toString('utf8'))) : { ...config, enableRateLimitAuditLogging: false, enableRateLimitResponseHeaders: false, rateLimitExemptPaths: [...DEFAULT_EXEMPT_PATHS] };
        exempt = exemptMatcher(config.rateLimitExemptPaths);
        return;
      }
      const m = /^(?:namespaces\/([^/]+)\/)?sys\/quotas\/(rate-limit|lease-count)\/([^/]+)$/.exec(storageKey);
      if (!m) return;
      const type = m[2] as QuotaType;
      const key = ruleKey({ ownerNamespaceId: m[1] ?? ROOT_NAMESPACE.id, name: m[3]! });
      const bytes = await store.get(storageKey);
      if (bytes) (rules[type] as Map<string, QuotaRule>).set(key, parseStored(type, bytes));
      else rules[type].delete(key);
      if (type === 'rate-limit') limiter.forget(key);
      reindex(type);
    },

    /** A mount was disabled (or its namespace deleted): its rules go with it, as in Vault. */
    async mountGone(namespaceId: string, mountPath: string): Promise<void> {
      for (const type of ['rate-limit', 'lease-count'] as const) {
        for (const r of [...rules[type].values()]) {
          if (r.target.namespaceId !== namespaceId || r.target.mountPath !== mountPath) continue;
          const owner = namespaces.byId(r.ownerNamespaceId);
          if (owner) await removeRule(type, owner, r.name);
          else rules[type].delete(ruleKey(r));
        }
        reindex(type);
      }
    },

    /** Whether the login's role is worth resolving for this request (a role rule on its mount). */
    wantsRole(namespaceId: string, mountPath: string): boolean {
      return rateIndex.hasRoleRules(namespaceId, mountPath) || leaseIndex.hasRoleRules(namespaceId, mountPath);
    },

    /**
     * The rate-limit check of one request, null when no rule applies or the path is exempt;
     * `nsPath` is the path inside its namespace (what exempt paths name).
     */
    rateLimit(req: QuotaRequest & { nsPath: string; client: string }): (RateDecision & { rule: RateLimitRule; headers: Record<string, string>; audit: boolean }) | null {
      const rule = rateIndex.find(req);
      if (!rule || exempt(req.nsPath)) return null;
      const d = limiter.take(rule, ruleKey(rule), req.client);
      const headers: Record<string, string> = {};
      if (config.enableRateLimitResponseHeaders) {
        headers['X-Ratelimit-Limit'] = String(d.limit);
        headers['X-Ratelimit-Remaining'] = String(d.remaining);
        headers['X-Ratelimit-Reset'] = String(d.resetSeconds);
      }
      if (!d.allowed) {
        // Always: a 429 without it leaves clients guessing.
        headers['Retry-After'] = String(d.resetSeconds);
        rejectRate(rule);
      }
      return { ...d, rule, headers, audit: config.enableRateLimitAuditLogging };
    },

    /**
     * Reserves a place under the lease-count rule of a request that may create a lease; null when
     * no rule applies. Throws 429 when the rule is full.
     */
    async reserveLease(req: QuotaRequest, pathForError: string): Promise<LeaseReservation | null> {
      if (!active || !leaseIndex.find(req)) return null;
      await deps.leasesRestored();
      // Looked up again: the rules may have changed while the restore ran.
      const rule = leaseIndex.find(req);
      if (!rule) return null;
      const key = ruleKey(rule);
      const held = (counts.get(key) ?? 0) + (reserved.get(key) ?? 0);
      if (held >= rule.maxLeases) {
        metrics.quotaLeaseCountViolations.inc(labels(rule));
        throw new StrongroomError('bad_request', `request path "${pathForError}": lease count quota exceeded`, { status: 429 });
      }
      reserved.set(key, (reserved.get(key) ?? 0) + 1);
      const ticket: Ticket = { key, consumed: false, role: rule.target.role };
      let released = false;
      return {
        run: (fn) => tickets.run(ticket, fn),
        release() {
          if (released) return null;
          released = true;
          if (!ticket.consumed) reserved.set(key, Math.max(0, (reserved.get(key) ?? 0) - 1));
          const count = counts.get(key) ?? 0;
          return ticket.consumed && count * 10 >= rule.maxLeases * 9 ? `lease count quota '${rule.name}' is at ${count} of ${rule.maxLeases} leases` : null;
        },
      };
    },

    /**
     * The login role to store with a lease being written (the expiration manager asks): the one it
     * was counted under, or the role of the rule the current request reserved under.
     */
    leaseRole(leaseId: string): string | undefined {
      const known = roleOf.get(leaseId);
      if (known) return known;
      const t = tickets.getStore();
      return t && !t.consumed && t.role !== '' ? t.role : undefined;
    },

    /** The expiration manager holds a new lease (registered, a token's, or restored). */
    leaseHeld(leaseId: string, lease: HeldLease): void {
      if (lease.role) roleOf.set(leaseId, lease.role);
      const r = leaseRule(leaseId, lease);
      if (!r) return;
      const key = ruleKey(r);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      const t = tickets.getStore();
      if (t && !t.consumed && t.key === key) {
        t.consumed = true;
        reserved.set(key, Math.max(0, (reserved.get(key) ?? 0) - 1));
      }
    },

    /** The expiration manager let a lease go (revoked, expired, its token gone). */
    leaseDropped(leaseId: string, lease: HeldLease): void {
      const r = leaseRule(leaseId, lease);
      roleOf.delete(leaseId);
      if (!r) return;
      const key = ruleKey(r);
      counts.set(key, Math.max(0, (counts.get(key) ?? 0) - 1));
    },

    /** Sets the per-rule gauges (sys/metrics). */
    scrape(): void {
      for (const r of rules['lease-count'].values()) {
        metrics.quotaLeaseCount.set(labels(r), counts.get(ruleKey(r)) ?? 0);
        metrics.quotaLeaseCountMax.set(labels(r), r.maxLeases);
      }
    },

    stop(): void {
      limiter.stop();
    },
  };
}

/** "/v1/sys/health" and "sys/health" name the same path. */
function normalizeExempt(p: string): string {
  return p.trim().replace(/^\/+/, '').replace(/^v1\//, '');
}

/** Exact paths, and prefixes given with a trailing `*`. */
function exemptMatcher(paths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of paths.map(normalizeExempt)) {
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p.replace(/\/+$/, ''));
  }
  return (path) => {
    const p = path.replace(/\/+$/, '');
    return exact.has(p) || prefixes.some((x) => p.startsWith(x));
  };
}
