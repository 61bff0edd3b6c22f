/**
 * postgresql-database-plugin, shaped after Vault's: dynamic users from the
 * role's creation statements run in one transaction, password and expiration
 * changes, revocation (the role's statements or a default that reassigns and
 * drops what the user owns, then drops the role), and rotation of the
 * connection's own (root) password.
 *
 * Invariants:
 *  - passwords, and the connection URL once credentials are in it, are never
 *    logged, returned or put in an error: every driver message goes through
 *    `dbError`, which strips the statement knex prepends and scrubs secrets;
 *  - values substituted into statements are checked by assertSqlSafe, and
 *    statements are split before substitution;
 *  - a root rotation swaps the pool only after the database accepted the
 *    new password; the config kept here then holds the new one.
 */
import { knex, type Knex } from 'knex';
import { z } from 'zod';
import { StrongroomError, badRequest, database } from '@strongroom/sdk-plugin';
import { scramSha256Verifier } from './scram.js';

const {
  assertSqlSafe,
  formatExpiration,
  parseSqlConfig,
  renderConnectionUrl,
  renderStatement,
  renderUsernameTemplate,
  scrubSecrets,
  splitStatements,
} = database;
type DatabaseInstance = database.DatabaseInstance;
type DatabasePlugin = database.DatabasePlugin;
type DatabaseCredentialType = database.DatabaseCredentialType;

export const DEFAULT_USERNAME_TEMPLATE =
  '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 8) (.RoleName | truncate 8) (random 20) (unix_time) | truncate 63 }}';
const DEFAULT_PASSWORD_STATEMENT = `ALTER ROLE "{{name}}" WITH PASSWORD '{{password}}'`;
const DEFAULT_RENEW_STATEMENT = `ALTER ROLE "{{name}}" VALID UNTIL '{{expiration}}'`;
const DEFAULT_REVOKE_STATEMENTS = ['REASSIGN OWNED BY "{{name}}" TO CURRENT_USER', 'DROP OWNED BY "{{name}}"', 'DROP ROLE IF EXISTS "{{name}}"'];

const ACQUIRE_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;

const extraFields = {
  password_authentication: z.enum(['password', 'scram-sha-256']).default('password'),
};
type Config = ReturnType<typeof parseConfig>;

function parseConfig(raw: Record<string, unknown>) {
  const c = parseSqlConfig(raw, extraFields);
  if (!/^postgres(ql)?:\/\//i.test(c.connection_url.trim())) {
    throw badRequest('field "connection_url": must be a URL, postgresql://{{username}}:{{password}}@host:port/database');
  }
  return c;
}

// SQLSTATE classes that mean "the statement or its input is wrong": retrying will not help.
const USER_ERROR_CLASSES = new Set(['22', '23', '28', '2B', '3D', '3F', '42', '44', '0L', '0P']);

/** Any failure of a database call -> a typed, scrubbed error. */
function dbError(what: string, err: unknown, statements: readonly string[], secrets: readonly (string | undefined)[]): StrongroomError {
  if (err instanceof StrongroomError) return err;
  const e = (err ?? {}) as { message?: unknown; code?: unknown };
  let msg = typeof e.message === 'string' ? e.message : 'unknown error';
  // knex prepends the statement (with its values) to the server's message.
  for (const s of statements) if (msg.startsWith(`${s} - `)) msg = msg.slice(s.length + 3);
  msg = scrubSecrets(msg, [...secrets, ...statements]);
  const code = typeof e.code === 'string' ? e.code : '';
  const text = `${what}: ${msg}`;
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (USER_ERROR_CLASSES.has(code.slice(0, 2))) return badRequest(text);
    return new StrongroomError(code.startsWith('08') || code.startsWith('57') || code.startsWith('53') ? 'unavailable' : 'internal', text);
  }
  // No SQLSTATE: the server could not be reached (refused, timeout, pool exhausted).
  return new StrongroomError('unavailable', text);
}

function refuseCredentialType(t: DatabaseCredentialType): void {
  if (t !== 'password') throw badRequest(`credential_type ${t} is not supported by the postgresql plugin`);
}

// knex turns every `?` into a positional parameter for pg; statements carry none.
const escapeQuestionMarks = (sql: string) => sql.replace(/\?/g, '\\?');

export function createPostgresqlInstance(): DatabaseInstance {
  let config: Config | null = null;
  let rawConfig: Record<string, unknown> = {};
  let pool: Knex | null = null;

  const current = (): { config: Config; pool: Knex } => {
    if (!config || !pool) throw new StrongroomError('connection_not_initialized', 'connection is not initialized');
    return { config, pool };
  };
  const secretsOf = (c: Config | null, ...more: (string | undefined)[]) => {
    if (!c) return more;
    return [c.password, renderConnectionUrl(c.connection_url, { username: c.username, password: c.password, disableEscaping: c.disable_escaping }), ...more];
  };

  const openPool = (c: Config): Knex => {
    const connectionString = renderConnectionUrl(c.connection_url, { username: c.username, password: c.password, disableEscaping: c.disable_escaping });
    return knex({
      client: 'pg',
      connection: { connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
      pool: {
        min: 0,
        max: c.max_open_connections,
        // Idle connections beyond what is in use are closed after 30 s (knex's pool has no separate idle cap).
        idleTimeoutMillis: 30_000,
      },
      acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
    });
  };

  /** Runs rendered statements in one transaction; the error names what failed, scrubbed. */
  const runInTransaction = async (db: Knex, what: string, statements: string[], secrets: (string | undefined)[]) => {
    try {
      await db.transaction(async (trx) => {
        for (const s of statements) await trx.raw(escapeQuestionMarks(s));
      });
    } catch (err) {
      throw dbError(what, err, statements, secrets);
    }
  };

  const passwordValue = (c: Config, password: string) => (c.password_authentication === 'scram-sha-256' ? scramSha256Verifier(password) : password);

  const roleExists = async (db: Knex, name: string, c: Config): Promise<boolean> => {
    try {
      const r = await db.raw('SELECT 1 FROM pg_roles WHERE rolname = ?', [name]);
      return (r as { rows: unknown[] }).rows.length > 0;
    } catch (err) {
      throw dbError('failed to look up the user', err, [], secretsOf(c));
    }
  };

  return {
    async initialize(req) {
      const next = parseConfig(req.config);
      const db = openPool(next);
      if (req.verifyConnection) {
        try {
          await db.raw('SELECT 1');
        } catch (err) {
          await db.destroy().catch(() => undefined);
          const e = dbError('error verifying connection', err, [], secretsOf(next));
          throw badRequest(e.message);
        }
      }
      const old = pool;
      config = next;
      rawConfig = req.config;
      pool = db;
      if (old) await old.destroy().catch(() => undefined);
      return {
        config: {
          ...rawConfig,
          max_open_connections: next.max_open_connections,
          max_idle_connections: next.max_idle_connections,
          max_connection_lifetime: next.max_connection_lifetime,
          password_authentication: next.password_authentication,
        },
      };
    },

    async newUser(req) {
      const { config: c, pool: db } = current();
      refuseCredentialType(req.credentialType);
      const statements = splitStatements(req.statements.commands);
      if (statements.length === 0) throw badRequest('creation statements are required (creation_statements)');
      const username = renderUsernameTemplate(c.username_template || DEFAULT_USERNAME_TEMPLATE, {
        DisplayName: req.usernameConfig.displayName,
        RoleName: req.usernameConfig.roleName,
      });
      assertSqlSafe('username', username);
      assertSqlSafe('password', req.password);
      const values = { name: username, password: passwordValue(c, req.password), expiration: formatExpiration(req.expiration) };
      const secrets = secretsOf(c, req.password, values.password);
      try {
        await runInTransaction(db, 'failed to create user', statements.map((s) => renderStatement(s, values)), secrets);
      } catch (err) {
        const rollback = splitStatements(req.rollbackStatements.commands).map((s) => renderStatement(s, values));
        if (rollback.length > 0) await runInTransaction(db, 'rollback failed', rollback, secrets).catch(() => undefined);
        throw err;
      }
      return { username };
    },

    async updateUser(req) {
      const { config: c, pool: db } = current();
      refuseCredentialType(req.credentialType);
      if (req.publicKey) throw badRequest('credential_type rsa_private_key is not supported by the postgresql plugin');
      if (!req.password && !req.expiration) throw badRequest('no changes requested');
      assertSqlSafe('username', req.username);
      if (req.password) {
        const pw = req.password.newPassword;
        assertSqlSafe('password', pw);
        if (!(await roleExists(db, req.username, c))) throw badRequest(`cannot update password for username "${req.username}": it does not exist`);
        const values = { name: req.username, password: passwordValue(c, pw) };
        const templates = splitStatements(req.password.statements.commands);
        const statements = (templates.length ? templates : [DEFAULT_PASSWORD_STATEMENT]).map((s) => renderStatement(s, values));
        await runInTransaction(db, 'failed to change the password', statements, secretsOf(c, pw, values.password));
        if (req.username === c.username) {
          // Root rotation: from now on connect with the new password.
          const next = { ...c, password: pw };
          const old = db;
          config = next;
          rawConfig = { ...rawConfig, password: pw };
          pool = openPool(next);
          await old.destroy().catch(() => undefined);
        }
      }
      if (req.expiration) {
        const values = { name: req.username, expiration: formatExpiration(req.expiration.newExpiration) };
        const templates = splitStatements(req.expiration.statements.commands);
        const statements = (templates.length ? templates : [DEFAULT_RENEW_STATEMENT]).map((s) => renderStatement(s, values));
        await runInTransaction(current().pool, 'failed to change the expiration', statements, secretsOf(config));
      }
    },

    async deleteUser(req) {
      const { config: c, pool: db } = current();
      assertSqlSafe('username', req.username);
      const templates = splitStatements(req.statements.commands);
      if (templates.length === 0 && !(await roleExists(db, req.username, c))) return; // already gone: revocation is idempotent
      const statements = (templates.length ? templates : DEFAULT_REVOKE_STATEMENTS).map((s) => renderStatement(s, { name: req.username }));
      await runInTransaction(db, 'failed to revoke user', statements, secretsOf(c));
    },

    async close() {
      const db = pool;
      pool = null;
      config = null;
      if (db) await db.destroy();
    },
  };
}

export const postgresqlPlugin: DatabasePlugin = { type: 'postgresql', newInstance: createPostgresqlInstance };
