/**
 * Real database servers for tests (scripts/services/services.js through
 * services.ts): private PostgreSQL / MariaDB instances, or the ones already
 * running for this checkout, or STRONGROOM_TEST_PG_URL /
 * STRONGROOM_TEST_MYSQL_URL as given. The URLs are superuser (admin) URLs with
 * a password.
 */
import { randomBytes } from 'node:crypto';
import { StrongroomError } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';
import { dedicatedService, sharedService, type DedicatedService } from './services';

type Kind = 'postgres' | 'mysql';
const ENV: Record<Kind, string> = { postgres: 'STRONGROOM_TEST_PG_URL', mysql: 'STRONGROOM_TEST_MYSQL_URL' };

/** Superuser URL of a real PostgreSQL: postgresql://postgres:<pw>@127.0.0.1:<port>/postgres. */
export function postgresUrl(): string {
  return sharedService('postgres', ENV.postgres)[ENV.postgres]!;
}

/** Superuser URL of a real MySQL or MariaDB: mysql://root:<pw>@127.0.0.1:<port>/. */
/**
 * A server config for a node of an HA cluster on PostgreSQL: the shared server (or `url`),
 * the test's own tables when given, a plain TCP listener and `api_addr` (the node's own by
 * default); `extra` is appended (more listeners, top-level options).
 */
export function haPostgresConfig(o: { url?: string; tables?: { data: string; lock: string }; apiAddr?: string; extra?: string } = {}): string {
  const tables = o.tables ? `\n  table          = "${o.tables.data}"\n  ha_table       = "${o.tables.lock}"` : '';
  return `
storage "postgresql" {
  connection_url = "${o.url ?? postgresUrl()}"${tables}
  ha_enabled     = true
}
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
}
api_addr = "${o.apiAddr ?? 'http://127.0.0.1:$PORT'}"
${o.extra ?? ''}
`;
}

export function mysqlUrl(): string {
  return sharedService('mysql', ENV.mysql)[ENV.mysql]!;
}

export type DedicatedDatabase = DedicatedService;

/** A private database server for one test file alone (an outage test); costs an initdb, about 1.5 s. */
export function dedicatedDatabase(kind: Kind): DedicatedDatabase {
  return dedicatedService(kind);
}

/** `url` with other credentials (URL-escaped), e.g. to log in as a user the test created. */
export function withCredentials(url: string, username: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(username);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** What a failed login reports (the driver's error code, else its message), or 'logged in'. */
export async function loginFailure(login: () => Promise<unknown>): Promise<string> {
  const err = (await login().catch((e: unknown) => e)) as { code?: string } | undefined;
  return err instanceof Error ? err.code ?? err.message : 'logged in';
}

/** The error a promise rejects with (a plugin client call expected to fail). */
export const caught = async (p: Promise<unknown>) => (await p.catch((e: unknown) => e)) as StrongroomError;

/** A password every default policy accepts, different each call. */
export const testPassword = () => `Aa1-${randomBytes(12).toString('hex')}`;

/** A NewUser request for `roleName` running `commands`, expiring in an hour. */
export const newUserRequest = (
  commands: string[],
  roleName: string,
  password: string,
  over: Partial<database.NewUserRequest> = {},
): database.NewUserRequest => ({
  usernameConfig: { displayName: 'token', roleName },
  password,
  expiration: Math.floor(Date.now() / 1000) + 3600,
  statements: { commands },
  rollbackStatements: { commands: [] },
  credentialType: 'password',
  ...over,
});
