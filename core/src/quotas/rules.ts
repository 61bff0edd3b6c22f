/**
 * Quota rules and which one applies to a request (Vault's resource quotas). A rule targets a
 * namespace, a mount in it, or a path below that mount (exact, or a prefix ending in `*`), and
 * optionally a role of a login (on an auth mount). The most specific rule of a type wins, in
 * Vault's order: path below the mount, then the mount with the login's role, then the mount,
 * then the namespace, then the global rule (the root namespace's rule with an empty path),
 * which alone applies in every namespace. Pure: no storage, no clock.
 */
import { z } from 'zod';

export type QuotaType = 'rate-limit' | 'lease-count';

/** Where a rule applies, resolved when it is written. */
export interface QuotaTarget {
  /** Namespace id ('root' for the root namespace). */
  namespaceId: string;
  /** Route path of the mount ("database/", "auth/approle/"); '' for the whole namespace. */
  mountPath: string;
  /** Path below the mount: exact without a trailing '/', or the prefix before a '*' as written; '' for the whole mount. */
  suffix: string;
  /** The suffix ended in '*': every path that starts with it. */
  glob: boolean;
  /** A login's role on an auth mount; '' for none. */
  role: string;
}

const storedBase = {
  name: z.string().min(1),
  /** The path as written, relative to the namespace the rule was written in. */
  path: z.string(),
  role: z.string(),
  /** The namespace whose sys/quotas holds the rule. */
  ownerNamespaceId: z.string(),
  target: z.object({ namespaceId: z.string(), mountPath: z.string(), suffix: z.string(), glob: z.boolean(), role: z.string() }),
};

export const storedRateLimitSchema = z.object({
  ...storedBase,
  type: z.literal('rate-limit'),
  rate: z.number().positive(),
  /** Seconds. */
  interval: z.number().int().positive(),
  /** Seconds; 0: none. */
  blockInterval: z.number().int().nonnegative(),
});

export const storedLeaseCountSchema = z.object({
  ...storedBase,
  type: z.literal('lease-count'),
  maxLeases: z.number().int().positive(),
});

export type RateLimitRule = z.infer<typeof storedRateLimitSchema>;
export type LeaseCountRule = z.infer<typeof storedLeaseCountSchema>;
export type QuotaRule = RateLimitRule | LeaseCountRule;

/** What is known of a request when a rule is chosen. */
export interface QuotaRequest {
  namespaceId: string;
  /** Route path of the mount the request goes to; '' when none. */
  mountPath: string;
  /** Path below the mount. */
  path: string;
  /** The login's role, when the request is a login and a role rule could apply. */
  role?: string;
}

const ROOT = 'root';
const keyOf = (namespaceId: string, mountPath: string): string => `${namespaceId}\u0000${mountPath}`;

/** The rules of one type, indexed by namespace and mount. */
export interface RuleIndex<R extends QuotaRule> {
  /** The rule that applies, or null. */
  find(req: QuotaRequest): R | null;
  /** Whether some rule on this mount has a role (the login's role is worth resolving). */
  hasRoleRules(namespaceId: string, mountPath: string): boolean;
  all(): R[];
}

export function indexRules<R extends QuotaRule>(rules: readonly R[]): RuleIndex<R> {
  const byMount = new Map<string, R[]>();
  for (const r of rules) {
    const k = keyOf(r.target.namespaceId, r.target.mountPath);
    const list = byMount.get(k);
    if (list) list.push(r);
    else byMount.set(k, [r]);
  }
  const plain = (list: R[] | undefined): R | null => list?.find((r) => r.target.suffix === '' && r.target.role === '') ?? null;
  return {
    find(req) {
      if (byMount.size === 0) return null;
      if (req.mountPath !== '') {
        const onMount = byMount.get(keyOf(req.namespaceId, req.mountPath));
        if (onMount) {
          const path = req.path.replace(/\/+$/, '');
          let best: R | null = null;
          for (const r of onMount) {
            const t = r.target;
            if (t.suffix === '') continue;
            if (!t.glob && t.suffix === path) return r;
            if (t.glob && path.startsWith(t.suffix) && (!best || t.suffix.length > best.target.suffix.length)) best = r;
          }
          if (best) return best;
          if (req.role) {
            const byRole = onMount.find((r) => r.target.suffix === '' && r.target.role === req.role);
            if (byRole) return byRole;
          }
          const mount = plain(onMount);
          if (mount) return mount;
        }
      }
      const ns = plain(byMount.get(keyOf(req.namespaceId, '')));
      if (ns) return ns;
      return req.namespaceId === ROOT ? null : plain(byMount.get(keyOf(ROOT, '')));
    },
    hasRoleRules(namespaceId, mountPath) {
      return byMount.get(keyOf(namespaceId, mountPath))?.some((r) => r.target.role !== '') ?? false;
    },
    all: () => rules.slice(),
  };
}

/** Two rules of a type may not target the same thing: which one applies would be arbitrary. */
export function sameTarget(a: QuotaTarget, b: QuotaTarget): boolean {
  return a.namespaceId === b.namespaceId && a.mountPath === b.mountPath && a.suffix === b.suffix && a.glob === b.glob && a.role === b.role;
}
