/**
 * sys/namespaces(/:path): create, read, patch, list and delete namespaces
 * below the request's namespace (OpenBao's API; Vault Enterprise's).
 * Deleting is asynchronous as in Vault: the namespace stops resolving at once,
 * then its leases, tokens, mounts and storage are removed in the background.
 */
import { z } from 'zod';
import { badRequest, f, notFound, paginate, type FieldValues, type OperationSpec } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { Namespace } from '../namespace/namespaces.js';
import type { SysDeps } from './deps.js';
import { namespaceOf } from './namespace-of.js';

const namespaceFields = {
  path: f.string().describe('Name of the namespace, one path segment, inside the request\'s namespace.'),
  custom_metadata: z
    .record(z.string(), z.string().nullable())
    .optional()
    .describe('Map of string keys to string values describing the namespace (on patch, null removes a key).'),
};

const view = (ns: Namespace) => ({ id: ns.id, path: ns.path, custom_metadata: { ...ns.customMetadata } });

export function namespacePaths(deps: Pick<SysDeps, 'namespaces' | 'namespaceAdmin'>): SysPathDef[] {
  const admin = deps.namespaceAdmin;
  // A namespace being deleted still reads until its removal is complete ("a second read shows it gone").
  const child = (parent: Namespace, name: string) => admin.find(`${parent.path}${name.replace(/\/+$/, '')}/`);
  const createOp: OperationSpec<FieldValues<typeof namespaceFields>> = {
    summary: 'Create the namespace (an existing one is returned unchanged).',
    handler: async (req) => ({ data: view(await admin.create(namespaceOf(deps, req.mount), req.data.path.replace(/\/+$/, ''), stringsOnly(req.data.custom_metadata))) }),
  };
  return [
    defineSysPath({
      rootOnly: false,
      pattern: 'namespaces',
      synopsis: 'List the namespaces directly below this one.',
      operations: {
        list: {
          summary: 'Child namespaces, with trailing slashes, and their details in key_info.',
          handler: async (req) => {
            const parent = namespaceOf(deps, req.mount);
            const children = admin.children(parent);
            if (children.length === 0) throw notFound('no namespaces');
            const rel = (ns: Namespace) => ns.path.slice(parent.path.length);
            const keys = paginate(children.map(rel), req.list.after, req.list.limit);
            const keyInfo = Object.fromEntries(children.filter((c) => keys.includes(rel(c))).map((c) => [rel(c), view(c)]));
            return { data: { keys, key_info: keyInfo } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'namespaces/:path',
      fields: namespaceFields,
      synopsis: 'Create, read, patch or delete a namespace.',
      existenceCheck: async (req) => child(namespaceOf(deps, req.mount), req.data.path) !== undefined,
      operations: {
        read: {
          summary: 'The namespace\'s id, path and custom metadata.',
          handler: async (req) => {
            const ns = child(namespaceOf(deps, req.mount), req.data.path);
            if (!ns) throw notFound(`namespace "${req.data.path}" does not exist`);
            return { data: view(ns) };
          },
        },
        // Vault answers a write the same whether the namespace exists or not.
        create: createOp,
        update: createOp,
        patch: {
          summary: 'Merge custom metadata into the namespace (null removes a key).',
          handler: async (req) => {
            const ns = child(namespaceOf(deps, req.mount), req.data.path);
            if (!ns) throw notFound(`namespace "${req.data.path}" does not exist`);
            return { data: view(await admin.patch(ns, req.data.custom_metadata ?? {})) };
          },
        },
        delete: {
          summary: 'Delete the namespace and everything in it (refused while it has child namespaces).',
          handler: async (req) => {
            const ns = child(namespaceOf(deps, req.mount), req.data.path);
            if (!ns) return null; // deleting what is not there succeeds, as for mounts and policies
            await admin.delete(ns);
            return { data: { status: 'in-progress' } };
          },
        },
      },
    }),
  ];
}

function stringsOnly(meta: Record<string, string | null> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta ?? {})) {
    if (v === null) throw badRequest(`custom_metadata: the value of "${k}" must be a string`);
    out[k] = v;
  }
  return out;
}
