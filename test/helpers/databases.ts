/**
 * Real database servers for tests (scripts/services/db.js). The first call in
 * a test process starts private PostgreSQL / MariaDB instances, or reuses the
 * ones already running for this checkout, or takes STRONGROOM_TEST_PG_URL /
 * STRONGROOM_TEST_MYSQL_URL as given. The test run's global teardown stops
 * what was started for it. The URLs are superuser (admin) URLs with a password.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

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

/** Stops the private server in place (same port and data), for tests of a database that goes away. Not possible with a URL from the environment. */
export function stopDatabaseServer(kind: Kind): void {
  execFileSync(process.execPath, [DB_SCRIPT, 'stop-server', kind], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 120_000 });
}

/** Starts a server stopped by stopDatabaseServer again. */
export function startDatabaseServer(kind: Kind): void {
  execFileSync(process.execPath, [DB_SCRIPT, 'start-server', kind], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 120_000 });
}

/** `url` with other credentials (URL-escaped), e.g. to log in as a user the test created. */
export function withCredentials(url: string, username: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(username);
  u.password = encodeURIComponent(password);
  return u.toString();
}
