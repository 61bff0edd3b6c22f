/**
 * creds/:name: a new RabbitMQ user for a role, created through the management
 * API and returned as a renewable lease. Revocation deletes the user. A
 * revocation that fails (RabbitMQ down) is returned as an error, so the core's
 * expiration manager keeps the lease and retries it, as for databases.
 *
 * The generated password goes to RabbitMQ and to the caller only: it is not
 * in the lease's internal data, not logged, and scrubbed from upstream errors.
 */
import { badRequest, definePath, defineSecret, f, generatePassword, type HandlerRequest, leaseTtl, passwordPolicy, type PathDef, type SecretTypeDef } from '@strongroom/sdk-plugin';
import type { EngineDeps } from '../deps.js';
import type { ConnectionConfig } from '../store.js';

const CREDS_SECRET_TYPE = 'creds';

const ALPHANUMERIC = passwordPolicy({ length: 36, rules: [{ charset: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', minChars: 1 }] });

interface CredsInternal {
  username: string;
  role: string;
}

async function newPassword(deps: EngineDeps, cfg: Readonly<ConnectionConfig>): Promise<string> {
  return cfg.password_policy ? deps.system.generatePasswordFromPolicy(cfg.password_policy) : generatePassword(ALPHANUMERIC);
}

/** The lease's TTLs: config/lease, else the mount's. */
async function leaseTtls(deps: EngineDeps): Promise<leaseTtl.LeaseTtls> {
  const lease = await deps.store.lease.view();
  return leaseTtl.resolve(deps.system, lease?.ttl ?? 0, lease?.max_ttl ?? 0);
}

const internalOf = (req: HandlerRequest): CredsInternal => {
  const d = (req.secret?.internalData ?? {}) as Partial<CredsInternal>;
  if (typeof d.username !== 'string' || !d.username) throw badRequest('lease is missing its username');
  return { username: d.username, role: String(d.role ?? '') };
};

export function credsSecret(deps: EngineDeps): SecretTypeDef {
  return defineSecret({
    type: CREDS_SECRET_TYPE,
    // RabbitMQ users do not expire by themselves: a renewal only moves the lease, within max_ttl of issue.
    renew: async (req) => leaseTtl.renewed(req.secret!, await leaseTtls(deps), deps.now()),
    revoke: async (req) => {
      const { username } = internalOf(req);
      const { client } = await deps.clients.current();
      const existed = await client.deleteUser(username);
      if (!existed) deps.logger.info('revoked a RabbitMQ user that was already gone', { username });
      return null;
    },
  });
}

export function credsPath(deps: EngineDeps, secret: SecretTypeDef): PathDef {
  return definePath({
    pattern: 'creds/:name',
    fields: { name: f.string().describe('Role name') },
    synopsis: 'Create RabbitMQ credentials for a role (a renewable lease).',
    description: CREDS_HELP,
    operations: {
      read: {
        summary: 'Create a RabbitMQ user with the role tags and permissions and return its credentials.',
        handler: async (req) => {
          const role = await deps.store.roles.view(req.data.name);
          if (!role) throw badRequest(`unknown role: ${req.data.name}`);
          const [{ client, config, usernames }, ttls] = await Promise.all([deps.clients.current(), leaseTtls(deps)]);
          const username = usernames.render({ DisplayName: req.client.displayName, RoleName: role.name });
          if (!username) throw badRequest('username_template: rendered an empty username');
          const password = await newPassword(deps, config);

          await client.putUser(username, password, role.tags ? role.tags.split(',') : []);
          try {
            await Promise.all([
              ...Object.entries(role.vhostPermissions).map(([vhost, p]) => client.setPermissions(vhost, username, p)),
              ...Object.entries(role.topicPermissions).flatMap(([vhost, exchanges]) =>
                Object.entries(exchanges).map(([exchange, p]) => client.setTopicPermissions(vhost, username, exchange, p)),
              ),
            ]);
          } catch (err) {
            // The user exists with only part of its permissions: remove it rather than hand out or leak it.
            await client.deleteUser(username).catch((e: unknown) =>
              deps.logger.error('could not delete a user left with partial permissions', { username, error: e instanceof Error ? e.message : String(e) }),
            );
            throw err;
          }
          const internal: CredsInternal = { username, role: role.name };
          return secret.response({ username, password }, { ...internal }, { ttl: ttls.ttl, maxTtl: ttls.maxTtl, renewable: true });
        },
      },
    },
  });
}

const CREDS_HELP = `Creates a RabbitMQ user through the management API, with the role's tags,
vhost permissions and topic permissions, and returns its username and password
as a lease (TTLs from config/lease, else the mount's). Revoking the lease (or
its expiry) deletes the user; if RabbitMQ cannot be reached then, the lease is
kept and the revocation retried.`;
