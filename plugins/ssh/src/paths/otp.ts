/**
 * One-time passwords: creds/:name hands one out as a lease, verify (for the
 * host's helper, unauthenticated) consumes it exactly once, lookup and
 * config/zeroaddress say which roles serve an address.
 *
 * Security invariants: the OTP is returned once and never stored: storage,
 * the lease's internal data and the logs hold only its HMAC under the
 * mount's salt. A use is serialized per OTP, so two racing verifies of the
 * same OTP see one success. Revoking the lease (or its expiry) deletes it.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { badRequest, cidr, definePath, defineSecret, f, type PathDef, type SecretTypeDef } from '@strongroom/sdk-plugin';
import type { SshRole } from '../store.js';
import type { SshDeps } from './deps.js';

const OTP_SECRET_TYPE = 'secret_otp_type';

/** Whether role `name` accepts `ip`: its CIDRs minus its exclusions, or any address for a zero-address role. */
function roleAccepts(name: string, role: Readonly<SshRole>, ip: string, zero: string[]): boolean {
  const excluded = role.exclude_cidr_list ? role.exclude_cidr_list.split(',') : [];
  if (excluded.length && cidr.ipAllowed(ip, excluded)) return false;
  if (zero.includes(name)) return true;
  return role.cidr_list !== '' && cidr.ipAllowed(ip, role.cidr_list.split(','));
}

export function otpSecret({ store }: SshDeps): SecretTypeDef {
  return defineSecret({
    type: OTP_SECRET_TYPE,
    // No renew: OTP leases are not renewable (the core answers "lease is not renewable").
    revoke: async (req) => {
      const key = req.secret?.internalData.otp_key;
      // The lease holds the OTP record's storage key ("otp/<hmac>").
      if (typeof key !== 'string' || !key.startsWith(store.otps.prefix)) throw badRequest('lease is missing its OTP reference');
      const name = key.slice(store.otps.prefix.length);
      await store.otps.lock(name, () => store.otps.delete(name));
      return null;
    },
  });
}

export function otpPaths(deps: SshDeps, secret: SecretTypeDef): PathDef[] {
  const { store } = deps;

  const creds = definePath({
    pattern: 'creds/:name',
    fields: {
      name: f.string().describe('Name of the OTP role'),
      username: f.string().describe('User on the host (default: the role\'s default_user)').default(''),
      ip: f.string().describe('IP address of the host').optional(),
    },
    synopsis: 'A one-time password for a host (a lease).',
    operations: {
      update: {
        summary: 'Create an OTP.',
        handler: async (req) => {
          const { name } = req.data;
          const role = await store.roles.view(name);
          if (!role) throw badRequest(`unknown role: ${name}`);
          if (role.key_type !== 'otp') throw badRequest(`role "${name}" is not an OTP role (key_type ${role.key_type}); CA roles sign at sign/${name}`);
          const ip = req.data.ip?.trim() ?? '';
          if (ip === '') throw badRequest('field "ip": missing required field');
          if (isIP(ip) === 0) throw badRequest(`field "ip": invalid IP address "${ip}"`);
          const username = req.data.username || role.default_user;
          const allowed = role.allowed_users === '' ? [] : role.allowed_users.split(',');
          if (username !== role.default_user && !allowed.includes('*') && !allowed.includes(username)) {
            throw badRequest(`field "username": "${username}" is neither the role's default_user nor in its allowed_users`);
          }
          const zero = (await store.zeroAddressRoles()) ?? [];
          if (!roleAccepts(name, role, ip, zero)) throw badRequest(`field "ip": ${ip} is not in the role's cidr_list or is in its exclude_cidr_list`);
          const otp = randomUUID();
          const otpName = await store.otpName(otp);
          await store.otps.put(otpName, { ip, username, role_name: name });
          return secret.response(
            { key_type: 'otp', key: otp, username, ip, port: role.port },
            { otp_key: store.otps.key(otpName), role: name, username, ip },
            { renewable: false },
          );
        },
      },
    },
  });

  const verify = definePath({
    pattern: 'verify',
    fields: { otp: f.sensitive(f.string()).describe('The one-time password').optional() },
    unauthenticated: true,
    synopsis: 'Verify and consume an OTP (for the host).',
    operations: {
      update: {
        summary: 'The OTP\'s user and address, exactly once.',
        handler: async (req) => {
          const otp = req.data.otp ?? '';
          if (otp === '') throw badRequest('field "otp": missing required field');
          // The helper's connectivity check, as Vault answers it.
          if (otp === 'ping') return { data: { message: 'pong' } };
          const otpName = await store.otpName(otp);
          const rec = await store.otps.lock(otpName, async () => {
            const found = await store.otps.get(otpName);
            if (found) await store.otps.delete(otpName);
            return found;
          });
          if (!rec) throw badRequest('OTP not found');
          return { data: { username: rec.username, ip: rec.ip, role_name: rec.role_name } };
        },
      },
    },
  });

  const lookup = definePath({
    pattern: 'lookup',
    fields: { ip: f.string().describe('IP address').optional() },
    synopsis: 'The OTP roles that accept an IP address.',
    operations: {
      update: {
        summary: 'Roles whose CIDRs hold the address, and the zero-address roles.',
        handler: async (req) => {
          const ip = req.data.ip?.trim() ?? '';
          if (ip === '') throw badRequest('field "ip": missing required field');
          if (isIP(ip) === 0) throw badRequest(`field "ip": invalid IP address "${ip}"`);
          const zero = (await store.zeroAddressRoles()) ?? [];
          const roles: string[] = [];
          for (const name of await store.roles.list()) {
            const r = await store.roles.view(name);
            if (r?.key_type === 'otp' && roleAccepts(name, r, ip, zero)) roles.push(name);
          }
          return { data: { roles } };
        },
      },
    },
  });

  const zeroAddress = definePath({
    pattern: 'config/zeroaddress',
    fields: { roles: f.commaList().describe('Roles that accept any IP address').optional() },
    synopsis: 'Roles whose CIDR lists are ignored: they accept any IP address.',
    operations: {
      read: {
        summary: 'The zero-address roles.',
        handler: async () => {
          const roles = await store.zeroAddressRoles();
          return roles === null ? null : { data: { roles } };
        },
      },
      update: {
        summary: 'Set the zero-address roles.',
        handler: async (req) => {
          const roles = req.data.roles ?? [];
          if (roles.length === 0) throw badRequest('field "roles": missing required field');
          // A role that does not exist yet is accepted, so roles and this list can be written in either order.
          await store.zeroAddress.lock(() => store.zeroAddress.put({ roles: [...new Set(roles)] }));
          return null;
        },
      },
      delete: {
        summary: 'Remove the zero-address configuration.',
        handler: async () => {
          await store.zeroAddress.lock(() => store.zeroAddress.delete());
          return null;
        },
      },
    },
  });

  return [creds, verify, lookup, zeroAddress];
}
