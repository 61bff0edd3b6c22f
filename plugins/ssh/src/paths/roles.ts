/** roles/ (list with key_info) and roles/:name (read, write, delete). */
import { definePath, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import { buildRole, roleFields, roleView } from '../role.js';
import type { SshDeps } from './deps.js';

export function rolePaths({ store }: SshDeps): PathDef[] {
  const list = definePath({
    pattern: 'roles/',
    synopsis: 'List the roles.',
    operations: {
      list: {
        summary: 'Role names, with each role\'s key_type and issuer_ref in key_info.',
        handler: async (req) => {
          const keys = await store.roles.list(req.list);
          const key_info: Record<string, unknown> = {};
          for (const name of keys) {
            const r = await store.roles.view(name);
            if (r) key_info[name] = { key_type: r.key_type, issuer_ref: r.issuer_ref };
          }
          return { data: { keys, key_info } };
        },
      },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.roles.prefix) },
    },
  });

  const role = definePath({
    pattern: 'roles/:name',
    fields: roleFields,
    synopsis: 'Manage a role: an OTP role (key_type otp) or a CA role (key_type ca).',
    description: ROLE_HELP,
    existenceCheck: async (req) => (await store.roles.view(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (req) => {
          const r = await store.roles.view(req.data.name);
          return r ? { data: roleView(r) } : null;
        },
      },
      update: {
        summary: 'Create or replace a role.',
        handler: async (req) => {
          await store.roles.put(req.data.name, buildRole(req.data));
          return null;
        },
      },
      delete: {
        summary: 'Delete a role (and its place in config/zeroaddress).',
        handler: async (req) => {
          await store.zeroAddress.lock(async () => {
            const zero = await store.zeroAddressRoles();
            const ops = [store.roles.deleteOp(req.data.name)];
            if (zero?.includes(req.data.name)) ops.push(store.zeroAddress.putOp({ roles: zero.filter((r) => r !== req.data.name) }));
            await store.records.batch(ops);
          });
          return null;
        },
      },
    },
  });
  return [list, role];
}

const ROLE_HELP = `An OTP role (\`key_type=otp\`) hands out one-time passwords for hosts in
\`cidr_list\` (minus \`exclude_cidr_list\`), for \`default_user\` or one of
\`allowed_users\`. A CA role (\`key_type=ca\`) signs user and host keys within
its constraints: allowed users or domains, extensions, critical options, key
types and sizes, TTLs, and the issuer named by \`issuer_ref\`.`;
