/** sys/policies/acl(/:name) and the legacy sys/policy(/:name) (Vault's documented API). */
import { badRequest, f, notFound, paginate, permissionDenied, type HandlerRequest, type LogicalResponse } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { InProcessRequest } from '../request/ports.js';
import { decodeBase64Document } from '../hcl/base64-document.js';
import type { SysDeps } from './deps.js';
import { namespaceOf } from './namespace-of.js';

/**
 * The legacy sys/policy reads answer their fields at the top level as well as
 * in `data`, as Vault does for these pre-0.9 paths (node-vault reads
 * `policies` and `rules` there).
 */
function legacyEnvelope(requestId: string, data: Record<string, unknown>): LogicalResponse {
  const body = { ...data, request_id: requestId, lease_id: '', renewable: false, lease_duration: 0, data, wrap_info: null, warnings: null, auth: null };
  return { raw: { status: 200, contentType: 'application/json', body: JSON.stringify(body) } };
}

export function policyPaths(deps: SysDeps): SysPathDef[] {
  /**
   * The policy name a request acts on: lower-cased, as in Vault. The pipeline
   * authorised the path as spelled, so a name spelled otherwise (`ADMIN`) is
   * authorised again on the name actually used: a deny on sys/policies/acl/admin
   * cannot be bypassed by case (finding 2 of issue 11).
   */
  const policyName = async (req: HandlerRequest<{ name: string }>, legacy: boolean): Promise<string> => {
    const name = req.data.name.toLowerCase();
    if (name === req.data.name) return name;
    const path = `${req.mount.path}${legacy ? 'policy' : 'policies/acl'}/${name}`;
    const caps = await deps.capabilities.forEntry((req.raw as InProcessRequest).callerEntry ?? null, namespaceOf(deps, req.mount), path);
    if (!caps.includes('root') && !caps.includes(req.raw.operation)) throw permissionDenied();
    return name;
  };
  const list = (legacy: boolean) =>
    defineSysPath({
      rootOnly: false,
      pattern: legacy ? 'policy' : 'policies/acl',
      synopsis: 'List the ACL policies.',
      operations: {
        [legacy ? 'read' : 'list']: {
          summary: 'List the names of the ACL policies.',
          handler: async (req: { mount: import('@strongroom/sdk-plugin/host').MountInfo; list: { after: string; limit: number }; raw: { id: string } }) => {
            const names = (await deps.policies.list(namespaceOf(deps, req.mount))).sort();
            return legacy ? legacyEnvelope(req.raw.id, { keys: names, policies: names }) : { data: { keys: paginate(names, req.list.after, req.list.limit) } };
          },
        },
      },
    });
  const one = (legacy: boolean) =>
    defineSysPath({
      rootOnly: false,
      pattern: legacy ? 'policy/:name' : 'policies/acl/:name',
      fields: {
        name: f.string().describe('Name of the policy (lower-cased).'),
        policy: f.string().optional().describe('The policy document, in HCL or JSON (may be base64-encoded).'),
        rules: f.deprecated(f.string().optional().describe('Deprecated alias of policy.')),
      },
      synopsis: 'Read, write or delete an ACL policy.',
      existenceCheck: async (req) => (await deps.policies.get(namespaceOf(deps, req.mount), req.data.name.toLowerCase())) !== null,
      operations: {
        read: {
          summary: 'Read the policy.',
          handler: async (req) => {
            const name = await policyName(req, legacy);
            const text = await deps.policies.get(namespaceOf(deps, req.mount), name);
            if (text === null) throw notFound(`policy "${name}" not found`);
            return legacy ? legacyEnvelope(req.raw.id, { name, rules: text }) : { data: { name, policy: text } };
          },
        },
        update: {
          summary: 'Create or update the policy.',
          handler: async (req) => {
            const text = req.data.policy ?? req.data.rules;
            if (text === undefined || text === '') throw badRequest("policy: 'policy' parameter not supplied or empty");
            await deps.policies.put(namespaceOf(deps, req.mount), await policyName(req, legacy), decodeBase64Document(text));
            return null;
          },
        },
        delete: {
          summary: 'Delete the policy.',
          handler: async (req) => {
            await deps.policies.delete(namespaceOf(deps, req.mount), await policyName(req, legacy));
            return null;
          },
        },
      },
    });
  return [list(false), one(false), list(true), one(true)];
}
