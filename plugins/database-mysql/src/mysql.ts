/**
 * mysql-database-plugin (MySQL and MariaDB): the MySQL dialect of the SDK's
 * SQL database instance (sdk-plugin/src/database/sql-instance.ts holds the
 * statement flow and its security invariants), on knex with mysql2. Defaults
 * follow Vault's mysql plugin. MySQL has no account expiry: an expiration
 * change runs the role's renew statements, or does nothing.
 */
import './quiet-debug.js';
import { knex, type Knex } from 'knex';
import { badRequest } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';

const DEFAULT_USERNAME_TEMPLATE =
  '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 10) (.RoleName | truncate 10) (random 20) (unix_time) | truncate 32 }}';

const ACQUIRE_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;

type Config = database.SqlConnectionConfig;

interface Endpoint {
  host?: string;
  port?: number;
  socketPath?: string;
  database?: string;
  /** Userinfo as written, `{{username}}`/`{{password}}` still in it. */
  user: string;
  password: string;
}

const urlError = () =>
  badRequest('field "connection_url": must be mysql://{{username}}:{{password}}@host:port/database or {{username}}:{{password}}@tcp(host:port)/database');

/**
 * Reads connection_url in either spelling: a URL (mysql://user:pass@host:port/db)
 * or the Go driver's DSN that Vault documents (user:pass@tcp(host:port)/db,
 * user:pass@unix(/path)/db). Credentials are substituted into the parsed parts,
 * never into the text, so they need no escaping (disable_escaping has no effect here).
 */
function parseEndpoint(url: string): Endpoint {
  const text = url.trim();
  if (/^mysql:\/\//i.test(text)) {
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      throw urlError();
    }
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw urlError();
      }
    };
    return {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port ? Number(u.port) : 3306,
      ...(u.pathname.length > 1 ? { database: dec(u.pathname.slice(1)) } : {}),
      user: dec(u.username),
      password: dec(u.password),
    };
  }
  // Go DSN: [user[:password]@][net[(addr)]]/dbname[?params]; the password may hold '@' and '/'.
  const q = text.indexOf('?', text.lastIndexOf('/'));
  const main = q >= 0 ? text.slice(0, q) : text;
  const slash = main.lastIndexOf('/');
  if (slash < 0) throw urlError();
  const head = main.slice(0, slash);
  const dbname = main.slice(slash + 1);
  const at = head.lastIndexOf('@');
  const userinfo = at >= 0 ? head.slice(0, at) : '';
  const net = at >= 0 ? head.slice(at + 1) : head;
  const colon = userinfo.indexOf(':');
  const ep: Endpoint = { user: colon >= 0 ? userinfo.slice(0, colon) : userinfo, password: colon >= 0 ? userinfo.slice(colon + 1) : '' };
  if (dbname) ep.database = dbname;
  const m = /^(tcp|unix)?(?:\((.*)\))?$/.exec(net);
  if (!m) throw urlError();
  if (m[1] === 'unix') {
    if (!m[2]) throw urlError();
    ep.socketPath = m[2];
  } else {
    const addr = m[2] || '127.0.0.1:3306';
    const hp = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(addr);
    if (!hp || !hp[1]) throw urlError();
    ep.host = hp[1];
    ep.port = hp[2] ? Number(hp[2]) : 3306;
  }
  return ep;
}

const substitute = (s: string, c: Config) => s.replace(/\{\{\s*(username|password)\s*\}\}/g, (_m, k: string) => (k === 'username' ? c.username : c.password));

function parseConfig(raw: Record<string, unknown>): Config {
  const c = database.parseSqlConfig(raw, {});
  parseEndpoint(c.connection_url);
  return c;
}

function openPool(c: Config): database.SqlPool {
  const ep = parseEndpoint(c.connection_url);
  const connection: Record<string, unknown> = {
    user: substitute(ep.user, c),
    password: substitute(ep.password, c),
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Statements are run one by one; never let one string carry several.
    multipleStatements: false,
  };
  if (ep.socketPath) connection.socketPath = ep.socketPath;
  else Object.assign(connection, { host: ep.host, port: ep.port });
  if (ep.database) connection.database = ep.database;
  const db: Knex = knex({
    client: 'mysql2',
    connection,
    pool: { min: 0, max: c.max_open_connections, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
  return {
    async runInTransaction(statements) {
      // CREATE USER and GRANT commit implicitly in MySQL: rollback statements undo them.
      await db.transaction(async (trx) => {
        for (const s of statements) await trx.raw(s);
      });
    },
    async runStatement(s) {
      await db.raw(s);
    },
    async userExists(name) {
      const [rows] = (await db.raw('SELECT 1 FROM mysql.user WHERE User = ? LIMIT 1', [name])) as [unknown[]];
      return rows.length > 0;
    },
    async ping() {
      await db.raw('SELECT 1');
    },
    destroy: () => db.destroy(),
  };
}

function readError(err: unknown): database.SqlErrorReading {
  const e = (err ?? {}) as { message?: unknown; sqlState?: unknown; fatal?: unknown };
  // The server quotes the statement from where parsing stopped, cut at a length that may
  // split a password (so scrubbing could miss its start): drop the quote altogether.
  const message = (typeof e.message === 'string' ? e.message : 'unknown error').replace(/near '[\s\S]*' at line (\d+)/, 'near [statement withheld] at line $1');
  const state = typeof e.sqlState === 'string' ? e.sqlState : '';
  if (!state || e.fatal === true || state.startsWith('08')) return { kind: 'unavailable', message };
  if (state.startsWith('40')) return { kind: 'unavailable', message }; // deadlock, lock wait: worth a retry
  return { kind: 'user', message };
}

const mysqlDialect: database.SqlDialect<Config> = {
  type: 'mysql',
  parseConfig,
  openPool,
  secretsOf: (c) => [substitute(c.connection_url, c)],
  normalized: (c) => ({
    max_open_connections: c.max_open_connections,
    max_idle_connections: c.max_idle_connections,
    max_connection_lifetime: c.max_connection_lifetime,
  }),
  readError,
  defaultUsernameTemplate: DEFAULT_USERNAME_TEMPLATE,
  defaultPasswordStatements: [`ALTER USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'`],
  defaultRenewStatements: null,
  defaultRevocationStatements: [`REVOKE ALL PRIVILEGES, GRANT OPTION FROM '{{name}}'@'%'`, `DROP USER '{{name}}'@'%'`],
};

export const mysqlPlugin: database.DatabasePlugin = {
  type: 'mysql',
  newInstance: () => database.createSqlDatabaseInstance(mysqlDialect),
};
