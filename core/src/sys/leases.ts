/**
 * sys/leases/* (spec "System: leases"): lookup, list, renew, revoke,
 * revoke-prefix, revoke-force, tidy, and the irrevocable-lease reports.
 * Lease ids may be given in the body or as a path suffix; the body wins.
 * Tokens are leases too (under their creation path, as in Vault): the
 * expiration manager answers for both, so nothing here tells them apart.
 */
import { badRequest, definePath, f, paginate, type MountInfo, type PathDef } from '@strongroom/sdk-plugin/host';
import type { ExpirationManager } from '../expiration/index.js';
import { namespaceOfLeaseId } from '../expiration/lease-entry.js';
import type { CoreLogger } from '../log/logger.js';
import { isWithinNamespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import { namespaceOf } from './namespace-of.js';

type LeaseDeps = {
  expiration: ExpirationManager;
  namespaces: NamespaceRegistry;
  logger: Pick<CoreLogger, 'warn'>;
};

export function leasePaths(deps: LeaseDeps): PathDef[] {
  const paths = currentLeasePaths(deps);
  // The pre-0.9 spellings Vault still serves and node-vault still calls.
  const alias = (legacy: string, current: string): PathDef => {
    const def = paths.find((p) => p.spec.pattern === current);
    if (!def) throw new Error(`no lease path ${current}`);
    return definePath({ ...def.spec, pattern: legacy, synopsis: `Legacy alias of sys/${current.replace(/[{*].*$/, '')}.` });
  };
  return [
    ...paths,
    alias('renew{/*url_lease_id}', 'leases/renew{/*url_lease_id}'),
    alias('revoke{/*url_lease_id}', 'leases/revoke{/*url_lease_id}'),
    alias('revoke-prefix/*prefix', 'leases/revoke-prefix/*prefix'),
  ];
}

function currentLeasePaths(deps: LeaseDeps): PathDef[] {
  const { expiration } = deps;
  const within = (req: { mount: MountInfo }, namespaceId: string) => isWithinNamespace(deps.namespaces, namespaceOf(deps, req.mount), namespaceId);
  /**
   * The lease id from the body or the path, refused as Vault refuses an unknown
   * one unless the lease belongs to the request's namespace or one below it: a
   * namespace never reaches a parent's or a sibling's leases.
   */
  const leaseId = (req: { mount: MountInfo }, body: string | undefined, suffix: string | undefined) => {
    const id = body || suffix;
    if (!id) throw badRequest('lease_id: missing required parameter');
    if (!within(req, namespaceOfLeaseId(id))) throw badRequest('invalid lease');
    return id;
  };
  const irrevocableFields = {
    type: f.query(f.string().optional().describe('Only "irrevocable" is supported.')),
    include_child_namespaces: f.query(f.bool().default(false)),
    limit: f.query(f.string().optional().describe('"none" lists every lease; default cap 10000.')),
  };
  const requireIrrevocable = (t: string | undefined) => {
    if (t !== 'irrevocable') throw badRequest('type: must be "irrevocable"');
  };
  return [
    definePath({
      pattern: 'leases/lookup',
      fields: { lease_id: f.string().optional().describe('The lease id.') },
      synopsis: 'Look up a lease.',
      operations: {
        update: {
          summary: 'Properties of a lease.',
          handler: async (req) => {
            const id = leaseId(req, req.data.lease_id, undefined);
            return { data: { ...(await expiration.lookup(id)) } };
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/lookup/*prefix',
      fields: { prefix: f.string().describe('Lease id prefix (sudo).') },
      synopsis: 'List lease ids below a prefix.',
      operations: {
        list: {
          summary: 'Lease ids and folders below the prefix.',
          handler: async (req) => {
            const ns = namespaceOf(deps, req.mount);
            const p = req.data.prefix.endsWith('/') || req.data.prefix === '' ? req.data.prefix : `${req.data.prefix}/`;
            const keys = await expiration.listPrefix(ns.id, p);
            return { data: { keys: paginate(keys, req.list.after, req.list.limit) } };
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/renew{/*url_lease_id}',
      fields: {
        lease_id: f.string().optional().describe('The lease id (wins over the path suffix).'),
        url_lease_id: f.string().optional(),
        increment: f.duration().default(0).describe('Requested extension, in seconds.'),
      },
      synopsis: 'Renew a lease.',
      operations: {
        update: {
          summary: 'Renew a lease (token leases are renewed through auth/token/renew).',
          handler: async (req) => {
            const id = leaseId(req, req.data.lease_id, req.data.url_lease_id);
            const r = await expiration.renew(id, req.data.increment);
            return { ...(r.data ? { data: r.data } : {}), warnings: r.warnings, renewedLease: { leaseId: r.leaseId, leaseDuration: r.leaseDuration, renewable: r.renewable } };
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/revoke{/*url_lease_id}',
      fields: {
        lease_id: f.string().optional(),
        url_lease_id: f.string().optional(),
        sync: f.bool().default(false).describe('Wait for the revocation instead of queueing it.'),
      },
      synopsis: 'Revoke a lease.',
      operations: {
        update: {
          summary: 'Revoke (queued unless sync).',
          handler: async (req) => {
            const id = leaseId(req, req.data.lease_id, req.data.url_lease_id);
            await expiration.revoke(id, { sync: req.data.sync });
            return null;
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/revoke-prefix/*prefix',
      fields: { prefix: f.string(), sync: f.bool().default(false) },
      synopsis: 'Revoke every lease below a prefix (sudo).',
      operations: {
        update: {
          summary: 'Revoke by prefix.',
          handler: async (req) => {
            const ns = namespaceOf(deps, req.mount);
            await expiration.revokePrefix(ns.id, req.data.prefix, { sync: req.data.sync, force: false });
            return null;
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/revoke-force/*prefix',
      fields: { prefix: f.string() },
      synopsis: 'Remove every lease below a prefix, ignoring backend errors (sudo).',
      operations: {
        update: {
          summary: 'Force revocation.',
          handler: async (req) => {
            const ns = namespaceOf(deps, req.mount);
            await expiration.revokePrefix(ns.id, req.data.prefix, { sync: true, force: true });
            return null;
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/tidy',
      synopsis: 'Remove lease entries whose token is gone.',
      operations: {
        update: {
          summary: 'Tidy the lease store.',
          handler: async () => {
            // Runs in the background, as in Vault: its outcome (e.g. "already running") goes to the log,
            // and a rejection must never go unhandled (that would end the process).
            expiration.tidy().catch((err: unknown) => deps.logger.warn('lease tidy did not complete', { error: err instanceof Error ? err.message : String(err) }));
            return { warnings: ['Tidy operation successfully started. Any information from the operation will be printed to the server logs.'] };
          },
        },
      },
    }),
    definePath({
      pattern: 'leases/count',
      fields: irrevocableFields,
      synopsis: 'Count irrevocable leases.',
      operations: {
        read: {
          summary: 'Total and per-mount counts.',
          handler: async (req) => {
            requireIrrevocable(req.data.type);
            const ns = namespaceOf(deps, req.mount);
            const c = expiration.countIrrevocable({ namespaceId: ns.id, includeChildNamespaces: req.data.include_child_namespaces });
            return { data: { lease_count: c.leaseCount, counts: c.counts } };
          },
        },
      },
    }),
    definePath({
      pattern: 'leases',
      fields: irrevocableFields,
      synopsis: 'List irrevocable leases.',
      operations: {
        read: {
          summary: 'Irrevocable leases (cap 10000 unless limit=none).',
          handler: async (req) => {
            requireIrrevocable(req.data.type);
            const ns = namespaceOf(deps, req.mount);
            const raw = req.data.limit;
            let limit: number | 'none' | undefined;
            if (raw === 'none') limit = 'none';
            else if (raw !== undefined && raw !== '') {
              limit = Number(raw);
              if (!Number.isInteger(limit) || limit < 0) throw badRequest('limit: must be a non-negative integer or "none"');
            }
            const r = expiration.irrevocable({ namespaceId: ns.id, includeChildNamespaces: req.data.include_child_namespaces, ...(limit !== undefined ? { limit } : {}) });
            return { data: { lease_count: r.leaseCount, leases: r.leases }, warnings: r.warnings };
          },
        },
      },
    }),
  ];
}
