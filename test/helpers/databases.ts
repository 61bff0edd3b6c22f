/**
 * Real database servers for tests (scripts/services/db.js). The first call in
 * a test process starts private PostgreSQL / MariaDB instances, or reuses the
 * ones already running for this checkout, or takes STRONGROOM_TEST_PG_URL /
 * STRONGROOM_TEST_MYSQL_URL as given. The test run's global teardown stops
 * what was started for it. The URLs are superuser (admin) URLs with a password.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { StrongroomError } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';

const DB_SCRIPT = resolve(__dirname, '../../scripts/services/db.js');
type Kind = 'postgres' | 'mysql';
const ENV: Record<Kind, string> = { postgres: 'STRONGROOM_TEST_PG_URL', mysql: 'STRONGROOM_TEST_MYSQL_URL' };

function ensure(kind: Kind): string {
  const given = process.env[ENV[kind]];
  if (given) return given;
  const out = execFileSync(process.execPath, [DB_SCRIPT, 'up', kind, '--json', '--for-tests'], {
    encoding: 'utf8',
    timeout: 600_000,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = JSON.parse(out) as Record<string, string>;
  const url = urls[ENV[kind]];
  if (!url) throw new Error(`scripts/services/db.js gave no ${ENV[kind]}`);
  process.env[ENV[kind]] = url;
  return url;
}

/** Superuser URL of a real PostgreSQL: postgresql://postgres:<pw>@127.0.0.1:<port>/postgres. */
export function postgresUrl(): string {
  return ensure('postgres');
}

/** Superuser URL of a real MySQL or MariaDB: mysql://root:<pw>@127.0.0.1:<port>/. */
export function mysqlUrl(): string {
  return ensure('mysql');
}

export interface DedicatedDatabase {
  /** Superuser URL, as postgresUrl()/mysqlUrl(). */
  url: string;
  /** Stops the server in place (same port and data). */
  stop(): void;
  /** Starts it again after stop(). */
  start(): void;
  /** Stops it for good and deletes its data. */
  drop(): void;
}

/**
 * A private server for one test file alone, on its own free port, for tests
 * that take the server away: the shared one from postgresUrl()/mysqlUrl() is
 * in use by other test files at the same time, so it is never stopped. Costs
 * an initdb (about 1.5 s); drop() it in afterAll (the run's teardown stops
 * what a crashed test left). Needs the machine's binaries even when the URL
 * variables are set.
 */
export function dedicatedDatabase(kind: Kind): DedicatedDatabase {
  const run = (...args: string[]) =>
    execFileSync(process.execPath, [DB_SCRIPT, ...args], { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'inherit'] });
  const { id, url } = JSON.parse(run('dedicated', kind)) as { id: string; url: string };
  return {
    url,
    stop: () => void run('stop-server', id),
    start: () => void run('start-server', id),
    drop: () => void run('drop', id),
  };
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
