/** roles/ (list with key_info) and roles/:name (read, write, delete). */
import { definePath, type PathDef } from '@strongroom/sdk-plugin';
import { paginate } from '@strongroom/sdk-plugin/host';
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
          const keys = paginate(await store.listRoles(), req.list.after, req.list.limit);
          const key_info: Record<string, unknown> = {};
          for (const name of keys) {
            const r = await store.getRole(name);
            if (r) key_info[name] = { key_type: r.key_type, issuer_ref: r.issuer_ref };
          }
          return { data: { keys, key_info } };
        },
      },
    },
  });

  const role = definePath({
    pattern: 'roles/:name',
    fields: roleFields,
    synopsis: 'Manage a role: an OTP role (key_type otp) or a CA role (key_type ca).',
    description: ROLE_HELP,
    existenceCheck: async (req) => (await store.getRole(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (req) => {
          const r = await store.getRole(req.data.name);
          return r ? { data: roleView(r) } : null;
        },
      },
      update: {
        summary: 'Create or replace a role.',
        handler: async (req) => {
          const zero = (await store.zeroAddressRoles()) ?? [];
          await store.putRole(req.data.name, buildRole(req.data, zero.includes(req.data.name)));
          return null;
        },
      },
      delete: {
        summary: 'Delete a role (and its place in config/zeroaddress).',
        handler: async (req) => {
          await store.locked('zeroaddress', async () => {
            await store.deleteRole(req.data.name);
            const zero = await store.zeroAddressRoles();
            if (zero?.includes(req.data.name)) await store.setZeroAddressRoles(zero.filter((r) => r !== req.data.name));
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
