/**
 * creds/:name: a new database user for a dynamic role, returned as a lease.
 * Renewal extends the user's expiration (renew statements); revocation drops
 * it (revocation statements). A failed revocation is returned as an error so
 * the core's expiration manager retries it, and only after its retries
 * marks the lease irrevocable.
 */
import { badRequest, defineSecret, definePath, f, leaseTtl, type HandlerRequest, type PathDef } from '@strongroom/sdk-plugin';
import { newPassword, newRsaKeyPair } from '../credentials.js';
import { roleAllowed, type EngineDeps } from '../deps.js';
import type { CredentialType, DynamicRole } from '../store.js';

const CREDS_SECRET_TYPE = 'creds';

interface CredsInternal {
  username: string;
  role: string;
  db_name: string;
  credential_type: CredentialType;
  /** The role's statements at issue time, used when the role is gone by revocation. */
  revocation_statements: string[];
}

const internalOf = (req: HandlerRequest): CredsInternal => {
  const d = (req.secret?.internalData ?? {}) as Partial<CredsInternal>;
  if (typeof d.username !== 'string' || typeof d.db_name !== 'string') throw badRequest('lease is missing its username or connection');
  return {
    username: d.username,
    role: String(d.role ?? ''),
    db_name: d.db_name,
    credential_type: (d.credential_type ?? 'password') as CredentialType,
    revocation_statements: Array.isArray(d.revocation_statements) ? d.revocation_statements.map(String) : [],
  };
};

/** The role's TTLs, the mount's where the role sets none. */
const roleTtls = (deps: EngineDeps, role: DynamicRole) => leaseTtl.resolve(deps.system, role.default_ttl, role.max_ttl);

export function credsSecret(deps: EngineDeps): ReturnType<typeof defineSecret> {
  return defineSecret({
    type: CREDS_SECRET_TYPE,
    renew: async (req) => {
      const i = internalOf(req);
      const role = await deps.store.roles.view(i.role);
      if (!role) throw badRequest(`role "${i.role}" no longer exists; the lease cannot be renewed`);
      const res = leaseTtl.renewed(req.secret!, await roleTtls(deps, role), deps.now());
      await deps.connections.use(i.db_name, (client) =>
        client.updateUser({
          username: i.username,
          credentialType: i.credential_type,
          expiration: { newExpiration: Math.floor(deps.now() / 1000) + res.secret.ttl, statements: { commands: role.renew_statements } },
        }),
      );
      return res;
    },
    revoke: async (req) => {
      const i = internalOf(req);
      const role = i.role ? await deps.store.roles.view(i.role) : null;
      const statements = role ? role.revocation_statements : i.revocation_statements;
      await deps.connections.use(i.db_name, (client) => client.deleteUser({ username: i.username, statements: { commands: statements } }));
      return null;
    },
  });
}

export function credsPath(deps: EngineDeps, secret: ReturnType<typeof defineSecret>): PathDef {
  return definePath({
    pattern: 'creds/:name',
    fields: { name: f.string().describe('Role name') },
    synopsis: 'Create database credentials for a role (a lease).',
    operations: {
      read: {
        summary: 'Create a database user and return its credentials.',
        handler: async (req) => {
          const role = await deps.store.roles.view(req.data.name);
          if (!role) throw badRequest(`unknown role: ${req.data.name}`);
          const cfg = await deps.store.configs.view(role.db_name);
          if (!cfg) throw badRequest(`db_name: connection "${role.db_name}" of role "${role.name}" does not exist`);
          if (!roleAllowed(cfg.allowed_roles, role.name)) throw badRequest(`role "${role.name}" is not allowed by connection "${cfg.name}" (allowed_roles)`);
          const { ttl, maxTtl } = await roleTtls(deps, role);
          const expiration = Math.floor(deps.now() / 1000) + ttl;

          const data: Record<string, unknown> = {};
          let password = '';
          let publicKey: string | undefined;
          switch (role.credential_type) {
            case 'password':
              password = await newPassword(deps.system, cfg, role.credential_config);
              break;
            case 'rsa_private_key': {
              const pair = newRsaKeyPair(role.credential_config);
              publicKey = pair.publicKey;
              data.rsa_private_key = pair.privateKey;
              break;
            }
            case 'client_certificate':
              throw badRequest('credential_type: client_certificate credentials are not issued by this build of the database engine');
          }
          const { username } = await deps.connections.use(cfg.name, (client) =>
            client.newUser({
              usernameConfig: { displayName: req.client.displayName, roleName: role.name },
              password,
              expiration,
              statements: { commands: role.creation_statements },
              rollbackStatements: { commands: role.rollback_statements },
              credentialType: role.credential_type,
              ...(publicKey ? { publicKey } : {}),
            }),
          );
          const internal: CredsInternal = {
            username,
            role: role.name,
            db_name: cfg.name,
            credential_type: role.credential_type,
            revocation_statements: role.revocation_statements,
          };
          return secret.response(role.credential_type === 'password' ? { username, password } : { username, ...data }, { ...internal }, { ttl, maxTtl, renewable: true });
        },
      },
    },
  });
}
