/**
 * sys/quotas/* (Vault's resource quotas): rate-limit and lease-count rules in every namespace
 * (a rule's path is read from the namespace that writes it, and reaches that namespace and the
 * ones below it only), and sys/quotas/config, server-wide, in the root namespace. The rules and
 * their enforcement live in core/src/quotas.
 */
import { badRequest, f, notFound, paginate } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { NamespaceRegistry } from '../namespace/namespaces.js';
import type { QuotaManager, RuleInput } from '../quotas/quota-manager.js';
import type { QuotaType } from '../quotas/rules.js';
import { namespaceOf } from './namespace-of.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';

interface QuotaDeps {
  quotas: QuotaManager;
  namespaces: NamespaceRegistry;
}

/** A positive number: 5, 2.5 or "5" (a rate may be fractional, as in Vault). */
const positiveNumber = () =>
  z.union([z.number(), z.string()]).transform((v, ctx): number => {
    const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(n) || n <= 0) {
      ctx.issues.push({ code: 'custom', message: 'must be a positive number', input: v });
      return z.NEVER;
    }
    return n;
  });

export function quotaPaths(deps: QuotaDeps): SysPathDef[] {
  const { quotas } = deps;
  const name = f.string().describe('Name of the quota.');
  const path = f.string().optional().describe('Where the quota applies: "" (this namespace; the root namespace\'s is global), a namespace ("ns1/"), a mount ("database/", "auth/approle/"), or a path below a mount, exact or with a trailing "*".');
  const role = f.string().optional().describe('A login role on the auth mount given as path (approle role name, userpass user name): the quota applies to that role\'s logins only.');

  const listPath = (type: QuotaType): SysPathDef =>
    defineSysPath({
      rootOnly: false,
      pattern: `quotas/${type}`,
      synopsis: `List the ${type} quotas of this namespace.`,
      operations: {
        list: {
          summary: `Names of the ${type} quotas.`,
          handler: async (req) => {
            const names = quotas.list(type, namespaceOf(deps, req.mount));
            if (names.length === 0) throw notFound(`no ${type} quotas`);
            return { data: { keys: paginate(names, req.list.after, req.list.limit) } };
          },
        },
      },
    });

  const readAndDelete = (type: QuotaType) => ({
    read: {
      summary: `Read a ${type} quota.`,
      handler: async (req: { mount: Parameters<typeof namespaceOf>[1]; data: { name: string } }) => {
        const q = quotas.read(type, namespaceOf(deps, req.mount), req.data.name);
        if (!q) throw notFound(`${type} quota "${req.data.name}" not found`);
        return { data: q };
      },
    },
    delete: {
      summary: `Delete a ${type} quota.`,
      handler: async (req: { mount: Parameters<typeof namespaceOf>[1]; data: { name: string } }) => {
        await quotas.remove(type, namespaceOf(deps, req.mount), req.data.name);
        return null;
      },
    },
  });

  return [
    listPath('rate-limit'),
    listPath('lease-count'),
    defineSysPath({
      rootOnly: false,
      pattern: 'quotas/rate-limit/:name',
      fields: {
        name,
        path,
        role,
        rate: positiveNumber().optional().describe('Requests allowed per interval, per client address; required when creating.'),
        interval: f.duration().optional().describe('The window the rate counts over (default 1s).'),
        block_interval: f.duration().optional().describe('When set, a client that goes past the rate is refused for this long.'),
      },
      synopsis: 'Create, read, update or delete a rate-limit quota.',
      existenceCheck: async (req) => quotas.read('rate-limit', namespaceOf(deps, req.mount), req.data.name) !== null,
      operations: {
        ...readAndDelete('rate-limit'),
        update: {
          summary: 'Create or update a rate-limit quota (fields not given keep their values).',
          handler: async (req) => {
            const owner = namespaceOf(deps, req.mount);
            const old = quotas.read('rate-limit', owner, req.data.name) as { path: string; role: string; rate: number; interval: number; block_interval: number } | null;
            const rate = req.data.rate ?? old?.rate;
            if (rate === undefined) throw badRequest('rate: missing required parameter (a positive number)');
            const interval = req.data.interval ?? old?.interval ?? 1;
            if (interval <= 0) throw badRequest('interval: must be positive');
            const input: RuleInput = {
              type: 'rate-limit',
              name: req.data.name,
              path: req.data.path ?? old?.path ?? '',
              role: req.data.role ?? old?.role ?? '',
              rate,
              interval,
              blockInterval: req.data.block_interval ?? old?.block_interval ?? 0,
            };
            await quotas.write(owner, input);
            return null;
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'quotas/lease-count/:name',
      fields: {
        name,
        path,
        role,
        max_leases: f.int({ min: 1 }).optional().describe('Leases allowed at once under this quota; required when creating.'),
      },
      synopsis: 'Create, read, update or delete a lease-count quota.',
      existenceCheck: async (req) => quotas.read('lease-count', namespaceOf(deps, req.mount), req.data.name) !== null,
      operations: {
        ...readAndDelete('lease-count'),
        update: {
          summary: 'Create or update a lease-count quota (fields not given keep their values); its count starts from the leases that exist.',
          handler: async (req) => {
            const owner = namespaceOf(deps, req.mount);
            const old = quotas.read('lease-count', owner, req.data.name) as { path: string; role: string; max_leases: number } | null;
            const maxLeases = req.data.max_leases ?? old?.max_leases;
            if (maxLeases === undefined) throw badRequest('max_leases: missing required parameter (a positive integer)');
            await quotas.write(owner, { type: 'lease-count', name: req.data.name, path: req.data.path ?? old?.path ?? '', role: req.data.role ?? old?.role ?? '', maxLeases });
            return null;
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'quotas/config',
      fields: {
        enable_rate_limit_audit_logging: f.bool().optional().describe('Write requests refused by a rate-limit quota to the audit devices.'),
        enable_rate_limit_response_headers: f.bool().optional().describe('Add X-Ratelimit-Limit, X-Ratelimit-Remaining and X-Ratelimit-Reset to rate-limited responses.'),
        rate_limit_exempt_paths: f.commaList().optional().describe('Paths (inside any namespace, "*" ending a prefix) no rate-limit quota applies to.'),
      },
      synopsis: 'The rate-limit quotas\' configuration.',
      operations: {
        read: {
          summary: 'Read the configuration.',
          handler: async () => {
            const c = quotas.config();
            return { data: { enable_rate_limit_audit_logging: c.enableRateLimitAuditLogging, enable_rate_limit_response_headers: c.enableRateLimitResponseHeaders, rate_limit_exempt_paths: c.rateLimitExemptPaths } };
          },
        },
        update: {
          summary: 'Update the configuration (fields not given keep their values).',
          handler: async (req) => {
            const c = quotas.config();
            await quotas.setConfig({
              enableRateLimitAuditLogging: req.data.enable_rate_limit_audit_logging ?? c.enableRateLimitAuditLogging,
              enableRateLimitResponseHeaders: req.data.enable_rate_limit_response_headers ?? c.enableRateLimitResponseHeaders,
              rateLimitExemptPaths: req.data.rate_limit_exempt_paths ?? c.rateLimitExemptPaths,
            });
            return null;
          },
        },
      },
    }),
  ];
}

