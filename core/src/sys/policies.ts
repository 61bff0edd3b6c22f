/** sys/policies/acl(/:name) and the legacy sys/policy(/:name) (Vault's documented API). */
import { badRequest, definePath, f, notFound, paginate, type PathDef } from '@strongroom/sdk-plugin';
import type { SysDeps } from './deps.js';
import { namespaceOf } from './namespace-of.js';

export function policyPaths(deps: SysDeps): PathDef[] {
  const list = (legacy: boolean) =>
    definePath({
      pattern: legacy ? 'policy' : 'policies/acl',
      synopsis: 'List the ACL policies.',
      operations: {
        [legacy ? 'read' : 'list']: {
          summary: 'List the names of the ACL policies.',
          handler: async (req: { mount: import('@strongroom/sdk-plugin').MountInfo; list: { after: string; limit: number } }) => {
            const names = (await deps.policies.list(namespaceOf(deps, req.mount))).sort();
            return legacy ? { data: { keys: names, policies: names } } : { data: { keys: paginate(names, req.list.after, req.list.limit) } };
          },
        },
      },
    });
  const one = (legacy: boolean) =>
    definePath({
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
            const name = req.data.name.toLowerCase();
            const text = await deps.policies.get(namespaceOf(deps, req.mount), name);
            if (text === null) throw notFound(`policy "${name}" not found`);
            return { data: legacy ? { name, rules: text } : { name, policy: text } };
          },
        },
        update: {
          summary: 'Create or update the policy.',
          handler: async (req) => {
            const text = req.data.policy ?? req.data.rules;
            if (text === undefined || text === '') throw badRequest("policy: 'policy' parameter not supplied or empty");
            await deps.policies.put(namespaceOf(deps, req.mount), req.data.name.toLowerCase(), decodeMaybeBase64(text));
            return null;
          },
        },
        delete: {
          summary: 'Delete the policy.',
          handler: async (req) => {
            await deps.policies.delete(namespaceOf(deps, req.mount), req.data.name.toLowerCase());
            return null;
          },
        },
      },
    });
  return [list(false), one(false), list(true), one(true)];
}

/** Vault accepts a base64-encoded policy document; HCL and JSON never parse as base64 of printable text. */
function decodeMaybeBase64(text: string): string {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || t.length % 4 !== 0) return text;
  const decoded = Buffer.from(t, 'base64').toString('utf8');
  return /^[\x09\x0a\x0d\x20-\x7e]*$/.test(decoded) && /[{=]/.test(decoded) ? decoded : text;
}
