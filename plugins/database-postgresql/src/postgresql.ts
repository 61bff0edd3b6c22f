/**
 * postgresql-database-plugin: the PostgreSQL dialect of the SDK's SQL
 * database instance (sdk-plugin/src/database/sql-instance.ts holds the
 * statement flow and its security invariants), on knex with the pg driver.
 * Defaults follow Vault's postgresql plugin. The default revocation works for
 * a superuser administrator and for a CREATEROLE one (PostgreSQL 15 and later,
 * and managed services, where it is the only kind): such an administrator
 * first takes membership of the role, which REASSIGN OWNED and DROP OWNED
 * need (CREATEROLE, or on 16+ the ADMIN OPTION its creator holds, allows that
 * grant whenever DROP ROLE is allowed at all); then the role loses its logins
 * and sessions, what it owns goes to the administrator, its privileges in the
 * database are revoked, and it is dropped, with the membership.
 */
import './quiet-debug.js';
import { knex, type Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';
import { scramSha256Verifier } from './scram.js';

const DEFAULT_USERNAME_TEMPLATE =
  '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 8) (.RoleName | truncate 8) (random 20) (unix_time) | truncate 63 }}';

const ACQUIRE_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
// SQLSTATE classes that mean "the statement or its input is wrong": retrying will not help.
const USER_ERROR_CLASSES = new Set(['22', '23', '28', '2B', '3D', '3F', '42', '44', '0L', '0P']);
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57']);

type Config = ReturnType<typeof parseConfig>;

function parseConfig(raw: Record<string, unknown>) {
  const c = database.parseSqlConfig(raw, { password_authentication: z.enum(['password', 'scram-sha-256']).default('password') });
  if (!/^postgres(ql)?:\/\//i.test(c.connection_url.trim())) {
    throw badRequest('field "connection_url": must be a URL, postgresql://{{username}}:{{password}}@host:port/database');
  }
  return c;
}

const renderedUrl = (c: Config) =>
  database.renderConnectionUrl(c.connection_url, { username: c.username, password: c.password, disableEscaping: c.disable_escaping });

// knex turns every `?` into a positional parameter for pg; statements carry none.
const escapeQuestionMarks = (sql: string) => sql.replace(/\?/g, '\\?');

function openPool(c: Config): database.SqlPool {
  const db: Knex = knex({
    client: 'pg',
    // sslmode and the other libpq URL parameters are read by pg from the URL.
    connection: { connectionString: renderedUrl(c), connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    // knex's pool has no separate idle cap: idle connections close after 30 s.
    pool: { min: 0, max: c.max_open_connections, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
  return {
    async runInTransaction(statements) {
      await db.transaction(async (trx) => {
        for (const s of statements) await trx.raw(escapeQuestionMarks(s));
      });
    },
    async runStatement(s) {
      await db.raw(escapeQuestionMarks(s));
    },
    async userExists(name) {
      const r = (await db.raw('SELECT 1 FROM pg_roles WHERE rolname = ?', [name])) as { rows: unknown[] };
      return r.rows.length > 0;
    },
    async revocationPrelude(name) {
      const r = (await db.raw("SELECT pg_has_role(current_user, oid, 'USAGE') AS member FROM pg_roles WHERE rolname = ?", [name])) as { rows: Array<{ member: boolean }> };
      return r.rows[0]?.member === false ? ['GRANT "{{name}}" TO CURRENT_USER'] : [];
    },
    async ping() {
      await db.raw('SELECT 1');
    },
    destroy: () => db.destroy(),
  };
}

function readError(err: unknown): database.SqlErrorReading {
  const e = (err ?? {}) as { message?: unknown; code?: unknown };
  const message = typeof e.message === 'string' ? e.message : 'unknown error';
  const code = typeof e.code === 'string' ? e.code : '';
  // No SQLSTATE: the server could not be reached (refused, timeout, pool exhausted).
  if (!/^[0-9A-Z]{5}$/.test(code)) return { kind: 'unavailable', message };
  const cls = code.slice(0, 2);
  return { kind: USER_ERROR_CLASSES.has(cls) ? 'user' : UNAVAILABLE_CLASSES.has(cls) ? 'unavailable' : 'internal', message };
}

const postgresqlDialect: database.SqlDialect<Config> = {
  type: 'postgresql',
  parseConfig,
  openPool,
  secretsOf: (c) => [renderedUrl(c)],
  normalized: (c) => ({
    max_open_connections: c.max_open_connections,
    max_idle_connections: c.max_idle_connections,
    max_connection_lifetime: c.max_connection_lifetime,
    password_authentication: c.password_authentication,
  }),
  readError,
  defaultUsernameTemplate: DEFAULT_USERNAME_TEMPLATE,
  defaultPasswordStatements: [`ALTER ROLE "{{name}}" WITH PASSWORD '{{password}}'`],
  defaultRenewStatements: [`ALTER ROLE "{{name}}" VALID UNTIL '{{expiration}}'`],
  defaultRevocationStatements: [
    'ALTER ROLE "{{name}}" NOLOGIN',
    // The user's open sessions end with it (its privileges would otherwise last as long as they do).
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{{name}}'",
    'REASSIGN OWNED BY "{{name}}" TO CURRENT_USER',
    'DROP OWNED BY "{{name}}"',
    'DROP ROLE IF EXISTS "{{name}}"',
  ],
  // With scram-sha-256 the plain password never reaches the server, not even inside a statement.
  passwordValue: (c, password) => (c.password_authentication === 'scram-sha-256' ? scramSha256Verifier(password) : password),
};

export const postgresqlPlugin: database.DatabasePlugin = {
  type: 'postgresql',
  newInstance: () => database.createSqlDatabaseInstance(postgresqlDialect),
};
