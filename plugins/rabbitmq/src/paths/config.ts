/**
 * config/connection and config/lease.
 *
 * Never returned: the administrator's password (a read answers every other
 * field). It is stored in the mount's storage, which the core encrypts. A
 * failed verification is a 400 whose message comes from the management
 * client, which scrubs the password from everything it reports.
 */
import { badRequest, definePath, f, type PathDef, StrongroomError, validateTemplate } from '@strongroom/sdk-plugin';
import type { EngineDeps } from '../deps.js';
import { normalizeBaseUri } from '../management-client.js';
import type { ConnectionConfig } from '../store.js';

export function configPaths(deps: EngineDeps): PathDef[] {
  const { store } = deps;

  const connection = definePath({
    pattern: 'config/connection',
    fields: {
      connection_uri: f.string().describe('Base URL of the RabbitMQ management HTTP API, e.g. http://127.0.0.1:15672').optional(),
      username: f.string().describe('A management administrator (tag administrator)').optional(),
      password: f.sensitive(f.string().describe("The administrator's password; stored encrypted, never returned")).optional(),
      verify_connection: f.bool().describe('Check the credentials against the management API before saving').default(true),
      password_policy: f.string().describe('Password policy for generated passwords; empty for 36 random letters and digits').default(''),
      username_template: f.string().describe('Template for generated usernames; empty for {{ printf "%s-%s" (.DisplayName) (uuid) }}').default(''),
    },
    synopsis: 'Configure the connection to the RabbitMQ management API.',
    description: CONNECTION_HELP,
    operations: {
      read: {
        summary: 'Read the connection (without the password).',
        handler: async () => {
          const c = await store.connection.view();
          if (!c) return null;
          return {
            data: {
              connection_uri: c.connection_uri,
              username: c.username,
              verify_connection: c.verify_connection,
              password_policy: c.password_policy,
              username_template: c.username_template,
            },
          };
        },
      },
      update: {
        summary: 'Configure the connection; every required field is sent each time, as in Vault.',
        handler: (req) =>
          store.connection.lock(async () => {
            const d = req.data;
            for (const k of ['connection_uri', 'username', 'password'] as const) {
              if (!d[k]) throw badRequest(`${k}: missing required field`);
            }
            let uri: string;
            try {
              uri = normalizeBaseUri(d.connection_uri!);
            } catch (err) {
              throw badRequest((err as Error).message);
            }
            if (d.username_template) validateTemplate(d.username_template, { DisplayName: 'display', RoleName: 'role' }, { field: 'username_template' });
            const cfg: ConnectionConfig = {
              connection_uri: uri,
              username: d.username!,
              password: d.password!,
              verify_connection: d.verify_connection,
              password_policy: d.password_policy,
              username_template: d.username_template,
            };
            if (cfg.verify_connection) {
              try {
                await deps.clients.forConfig(cfg).verify();
              } catch (err) {
                // The client's message never holds the password; an unexpected error says nothing at all.
                const why = err instanceof StrongroomError ? err.message : 'the management API could not be reached';
                throw badRequest(`verify_connection: ${why}`);
              }
            }
            await store.connection.put(cfg);
            return null;
          }),
      },
    },
  });

  const lease = definePath({
    pattern: 'config/lease',
    fields: {
      ttl: f.duration().describe('Lease TTL of issued credentials; 0 for the mount default').default(0),
      max_ttl: f.duration().describe('Maximum lease TTL of issued credentials; 0 for the mount maximum').default(0),
    },
    synopsis: 'Configure the lease of issued credentials.',
    description: LEASE_HELP,
    operations: {
      read: {
        summary: 'Read the lease configuration (seconds).',
        handler: async () => {
          const l = await store.lease.view();
          return l ? { data: { ttl: l.ttl, max_ttl: l.max_ttl } } : null;
        },
      },
      update: {
        summary: 'Set the lease configuration.',
        handler: async (req) => {
          const { ttl, max_ttl } = req.data;
          if (max_ttl > 0 && ttl > max_ttl) throw badRequest('ttl: cannot be greater than max_ttl');
          await store.lease.put({ ttl, max_ttl });
          return null;
        },
      },
    },
  });

  return [connection, lease];
}

const CONNECTION_HELP = `Configures how the engine reaches RabbitMQ: connection_uri is the base URL
of the management HTTP API (the rabbitmq_management plugin, e.g.
http://127.0.0.1:15672), username and password a management user tagged
administrator. The password is stored encrypted and never returned. With
verify_connection (the default) the credentials are checked before saving; a
failure is a 400. password_policy names a password policy for generated
passwords (default: 36 random letters and digits); username_template shapes
generated usernames (default: {{ printf "%s-%s" (.DisplayName) (uuid) }}).`;

const LEASE_HELP = `Sets the TTL (ttl) and the maximum TTL (max_ttl) of the leases of issued
credentials, in seconds or as durations ("1h"). 0 means the mount's default
and maximum. Renewals never go past issue time plus max_ttl.`;
