/**
 * One connection of a SQL database plugin, shaped after Vault's SQL plugins;
 * each database (postgresql, mysql) supplies a `SqlDialect`: its pool, its
 * default statements and how to read its driver's errors.
 *
 *  - NewUser renders the username template, runs the creation statements in
 *    one transaction (a single statement alone: it is atomic by itself, and
 *    BEGIN/COMMIT would add two round trips and hold the catalog lock of
 *    CREATE ROLE across them) and, when they fail, the rollback statements;
 *  - UpdateUser changes the password (the default statement when none are
 *    given) and/or the expiration (renew statements); a password change of
 *    the connection's own user is a root rotation: the pool is reopened with
 *    the new password once the database accepted it;
 *  - DeleteUser runs the revocation statements, or the dialect's default
 *    (skipped when the user is already gone, so revocation is idempotent).
 *
 * Invariants: passwords, and the connection URL with credentials in it, never
 * reach a log, a reply or an error (every driver error goes through `dbError`);
 * values are checked by assertSqlSafe and statements split before substitution.
 */
import { StrongroomError, badRequest } from '../errors.js';
import type { SqlConnectionConfig } from './sql-config.js';
import { assertSqlSafe, formatExpiration, renderStatement, splitStatements } from './statements.js';
import { scrubSecrets } from '../kit/scrub.js';
import { CONNECTION_NOT_INITIALIZED, type DatabaseCredentialType, type DatabaseInstance } from './types.js';
import { renderTemplate } from '../kit/template.js';

export interface SqlPool {
  /** Runs the statements, in order, in one transaction. */
  runInTransaction(statements: string[]): Promise<void>;
  /** Runs one statement on its own (autocommit). */
  runStatement(statement: string): Promise<void>;
  userExists(username: string): Promise<boolean>;
  /**
   * Statements the default revocation of this user needs first, in the same
   * transaction (postgresql: membership of the role for an administrator that
   * is not a superuser); none when absent.
   */
  revocationPrelude?(username: string): Promise<string[]>;
  ping(): Promise<void>;
  destroy(): Promise<void>;
}

/** How a driver error reads: `user` (the statement or input is wrong: 400), `unavailable` (503), `internal`. A failed revocation is retried whichever it is. */
export interface SqlErrorReading {
  kind: 'user' | 'unavailable' | 'internal';
  /** The server's message, before scrubbing (the plugin may trim statement text from it). */
  message: string;
}

export interface SqlDialect<C extends SqlConnectionConfig> {
  /** "postgresql", "mysql": names the plugin in errors. */
  type: string;
  parseConfig(raw: Record<string, unknown>): C;
  openPool(config: C): SqlPool;
  /** The URL/DSN with credentials in it, to scrub from messages. */
  secretsOf(config: C): string[];
  /** Config fields the plugin sets when normalising (returned to the engine). */
  normalized(config: C): Record<string, unknown>;
  readError(err: unknown): SqlErrorReading;
  defaultUsernameTemplate: string;
  defaultPasswordStatements: string[];
  /** null: without renew statements an expiration change does nothing (the database has no expiry). */
  defaultRenewStatements: string[] | null;
  defaultRevocationStatements: string[];
  /** What `{{password}}` becomes (postgresql's scram-sha-256 verifier); default the password itself. */
  passwordValue?(config: C, password: string): string;
}

export function createSqlDatabaseInstance<C extends SqlConnectionConfig>(dialect: SqlDialect<C>): DatabaseInstance {
  let config: C | null = null;
  let rawConfig: Record<string, unknown> = {};
  let pool: SqlPool | null = null;

  const current = (): { config: C; pool: SqlPool } => {
    if (!config || !pool) throw new StrongroomError(CONNECTION_NOT_INITIALIZED, 'connection is not initialized');
    return { config, pool };
  };
  const unsupported = (t: DatabaseCredentialType) => badRequest(`credential_type ${t} is not supported by the ${dialect.type} plugin`);
  const secrets = (c: C, ...more: string[]) => [c.password, ...dialect.secretsOf(c), ...more];

  /** Any failure of a database call -> a typed, scrubbed error. */
  const dbError = (what: string, err: unknown, statements: readonly string[], secretList: readonly string[]): StrongroomError => {
    if (err instanceof StrongroomError) return err;
    const r = dialect.readError(err);
    let msg = r.message;
    // knex prepends the statement (with its values) to the server's message.
    for (const s of statements) if (msg.startsWith(`${s} - `)) msg = msg.slice(s.length + 3);
    const text = `${what}: ${scrubSecrets(msg, [...secretList, ...statements])}`;
    if (r.kind === 'user') return badRequest(text);
    return new StrongroomError(r.kind, text);
  };
  const run = async (db: SqlPool, what: string, statements: string[], secretList: string[]) => {
    try {
      if (statements.length === 1) await db.runStatement(statements[0]!);
      else await db.runInTransaction(statements);
    } catch (err) {
      throw dbError(what, err, statements, secretList);
    }
  };
  const exists = async (db: SqlPool, c: C, username: string) => {
    try {
      return await db.userExists(username);
    } catch (err) {
      throw dbError('failed to look up the user', err, [], secrets(c));
    }
  };
  const passwordValue = (c: C, password: string) => (dialect.passwordValue ? dialect.passwordValue(c, password) : password);
  const withDefault = (commands: string[], fallback: string[]) => {
    const s = splitStatements(commands);
    return s.length > 0 ? s : fallback;
  };

  return {
    async initialize(req) {
      const next = dialect.parseConfig(req.config);
      const db = dialect.openPool(next);
      if (req.verifyConnection) {
        try {
          await db.ping();
        } catch (err) {
          await db.destroy().catch(() => undefined);
          throw badRequest(dbError('error verifying connection', err, [], secrets(next)).message);
        }
      }
      const old = pool;
      config = next;
      rawConfig = req.config;
      pool = db;
      if (old) await old.destroy().catch(() => undefined);
      return { config: { ...rawConfig, ...dialect.normalized(next) } };
    },

    async newUser(req) {
      const { config: c, pool: db } = current();
      if (req.credentialType !== 'password') throw unsupported(req.credentialType);
      const templates = splitStatements(req.statements.commands);
      if (templates.length === 0) throw badRequest('creation statements are required (creation_statements)');
      const username = renderTemplate(
        c.username_template || dialect.defaultUsernameTemplate,
        { DisplayName: req.usernameConfig.displayName, RoleName: req.usernameConfig.roleName },
        { field: 'username_template' },
      );
      assertSqlSafe('username', username);
      assertSqlSafe('password', req.password);
      const values = { name: username, password: passwordValue(c, req.password), expiration: formatExpiration(req.expiration) };
      const secretList = secrets(c, req.password, values.password);
      try {
        await run(db, 'failed to create user', templates.map((s) => renderStatement(s, values)), secretList);
      } catch (err) {
        const rollback = splitStatements(req.rollbackStatements.commands).map((s) => renderStatement(s, values));
        if (rollback.length > 0) await run(db, 'rollback failed', rollback, secretList).catch(() => undefined);
        throw err;
      }
      return { username };
    },

    async updateUser(req) {
      const { config: c, pool: db } = current();
      if (req.credentialType !== 'password') throw unsupported(req.credentialType);
      if (req.publicKey) throw unsupported('rsa_private_key');
      if (!req.password && !req.expiration) throw badRequest('no changes requested');
      assertSqlSafe('username', req.username);
      if (req.password) {
        const pw = req.password.newPassword;
        assertSqlSafe('password', pw);
        if (!(await exists(db, c, req.username))) throw badRequest(`cannot update password for username "${req.username}": it does not exist`);
        const values = { name: req.username, password: passwordValue(c, pw) };
        const statements = withDefault(req.password.statements.commands, dialect.defaultPasswordStatements).map((s) => renderStatement(s, values));
        await run(db, 'failed to change the password', statements, secrets(c, pw, values.password));
        if (req.username === c.username) {
          // Root rotation: from now on connect with the new password.
          const next = { ...c, password: pw };
          config = next;
          rawConfig = { ...rawConfig, password: pw };
          pool = dialect.openPool(next);
          await db.destroy().catch(() => undefined);
        }
      }
      if (req.expiration) {
        const fallback = dialect.defaultRenewStatements;
        const given = splitStatements(req.expiration.statements.commands);
        if (given.length === 0 && fallback === null) return;
        const values = { name: req.username, expiration: formatExpiration(req.expiration.newExpiration) };
        const statements = (given.length ? given : (fallback ?? [])).map((s) => renderStatement(s, values));
        const now = current();
        await run(now.pool, 'failed to change the expiration', statements, secrets(now.config));
      }
    },

    async deleteUser(req) {
      const { config: c, pool: db } = current();
      assertSqlSafe('username', req.username);
      const given = splitStatements(req.statements.commands);
      if (given.length === 0 && !(await exists(db, c, req.username))) return; // already gone
      let statements = given;
      if (given.length === 0) {
        let prelude: string[] = [];
        try {
          prelude = db.revocationPrelude ? await db.revocationPrelude(req.username) : [];
        } catch (err) {
          throw dbError('failed to revoke user', err, [], secrets(c));
        }
        statements = [...prelude, ...dialect.defaultRevocationStatements];
      }
      await run(db, 'failed to revoke user', statements.map((s) => renderStatement(s, { name: req.username })), secrets(c));
    },

    async close() {
      const db = pool;
      pool = null;
      config = null;
      if (db) await db.destroy();
    },
  };
}
