/**
 * The directory as the engine sees it, over ldapts: one bound connection per
 * mount, reused by every request (ldapts multiplexes operations by message
 * id), reopened after a connection error, a close by the server or a
 * configuration change.
 *
 * Security: the bind password and every password set here stay in memory;
 * errors leaving this module are scrubbed of the passwords involved (an LDAP
 * server may echo a value in its diagnostic message) and name no value.
 */
import type { ConnectionOptions } from 'node:tls';
import { Attribute, Change, Client, EqualityFilter, InvalidCredentialsError, NoSuchObjectError, ResultCodeError } from 'ldapts';
import { StrongroomError, badRequest, codedError, scrubSecrets } from '@strongroom/sdk-plugin';
import type { LdapConfig, Schema } from './store.js';

/** Per schema: the attribute that holds a password and the default search attribute (Vault's openldap plugin). */
export const SCHEMAS: Record<Schema, { userattr: string }> = {
  openldap: { userattr: 'cn' },
  ad: { userattr: 'userPrincipalName' },
  racf: { userattr: 'racfid' },
};

/** The modifications that set `password` on an entry, per schema. */
export function passwordChanges(schema: Schema, password: string): Change[] {
  const replace = (type: string, values: string[] | Buffer[]) => new Change({ operation: 'replace', modification: new Attribute({ type, values }) });
  switch (schema) {
    case 'openldap':
      return [replace('userPassword', [password])];
    case 'ad':
      // Active Directory takes the password quoted and UTF-16LE encoded.
      return [replace('unicodePwd', [Buffer.from(`"${password}"`, 'utf16le')])];
    case 'racf':
      // RACF keeps passwords of up to 8 characters and longer pass phrases apart; noexpired keeps it usable at once.
      return [replace(password.length > 8 ? 'racfPassPhrase' : 'racfPassword', [password]), replace('racfAttributes', ['noexpired'])];
  }
}

const TLS_VERSIONS: Record<string, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = { tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' };

function tlsOptions(cfg: Readonly<LdapConfig>, host: string): ConnectionOptions {
  const o: ConnectionOptions = { rejectUnauthorized: !cfg.insecure_tls, servername: host };
  if (cfg.certificate) o.ca = cfg.certificate;
  if (cfg.client_tls_cert) o.cert = cfg.client_tls_cert;
  if (cfg.client_tls_key) o.key = cfg.client_tls_key;
  const min = TLS_VERSIONS[cfg.tls_min_version];
  const max = TLS_VERSIONS[cfg.tls_max_version];
  if (min) o.minVersion = min;
  if (max) o.maxVersion = max;
  return o;
}

/** The DN (or UPN) the engine binds as: `<binddn>@<upndomain>` when a UPN domain is set. */
export const bindName = (cfg: Pick<LdapConfig, 'binddn' | 'upndomain'>) => (cfg.upndomain ? `${cfg.binddn}@${cfg.upndomain}` : cfg.binddn);

/** A directory error as the engine reports it: a 502 (a third party said no), scrubbed. */
export function directoryError(what: string, err: unknown, secrets: readonly string[]): StrongroomError {
  if (err instanceof StrongroomError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return codedError(502, scrubSecrets(`${what}: ${detail}`, secrets));
}

export const isNoSuchObject = (err: unknown) => err instanceof NoSuchObjectError;

/** Opens a connection to the first URL that answers (the list is tried in order on connection errors), bound as `dn`. */
async function connect(cfg: Readonly<LdapConfig>, dn: string, password: string): Promise<Client> {
  const urls = cfg.url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  let last: unknown = new Error('no url configured');
  for (const url of urls) {
    let host = '';
    try {
      host = new URL(url).hostname;
    } catch {
      throw badRequest(`url: invalid URL ${JSON.stringify(url)}`);
    }
    const tls = tlsOptions(cfg, host);
    // ldapts speaks TLS from the start whenever tlsOptions are given: only for ldaps:// (StartTLS gets them later).
    const secure = url.startsWith('ldaps://');
    const client = new Client({ url, connectTimeout: cfg.connection_timeout * 1000, timeout: cfg.request_timeout * 1000, strictDN: false, ...(secure ? { tlsOptions: tls } : {}) });
    try {
      // connection_timeout bounds the whole opening (TCP, TLS, bind): a server that accepts and then
      // says nothing is passed over like one that refuses, instead of holding the caller request_timeout long.
      let timer: NodeJS.Timeout | undefined;
      const opening = (async () => {
        if (cfg.starttls && !secure) await client.startTLS(tls);
        await client.bind(dn, password);
      })();
      opening.catch(() => undefined);
      await Promise.race([
        opening,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer from ${url} within connection_timeout (${cfg.connection_timeout} s)`)), cfg.connection_timeout * 1000);
        }),
      ]).finally(() => clearTimeout(timer));
      return client;
    } catch (err) {
      await client.unbind().catch(() => undefined);
      // A server that answered (wrong password, no rights) is the answer: the next URL would say the same.
      if (err instanceof ResultCodeError) throw err;
      last = err;
    }
  }
  throw last;
}

/** Whether `dn` binds with `password` (a fresh connection, closed at once). */
export async function canBind(cfg: Readonly<LdapConfig>, dn: string, password: string): Promise<boolean> {
  try {
    const c = await connect(cfg, dn, password);
    await c.unbind().catch(() => undefined);
    return true;
  } catch (err) {
    if (err instanceof InvalidCredentialsError) return false;
    throw err;
  }
}

export interface Directory {
  /** Runs `fn` on the mount's bound connection (opened on first use, reopened after a connection error or a close by the server). */
  use<T>(fn: (client: Client) => Promise<T>): Promise<T>;
  /** The DN of the entry a name stands for: `dn` as given (checked to exist), else `userattr=<name>` under `userdn`. */
  findDn(name: string, dn?: string): Promise<string>;
  /** Sets an entry's password by the schema's attribute. */
  setPassword(dn: string, password: string): Promise<void>;
  /** Drops the connection (configuration changed, bind password rotated). */
  close(): Promise<void>;
}

/** The directory of one configuration; `current()` gives the config in force (its bind password may change). */
export function createDirectory(current: () => Promise<Readonly<LdapConfig>>): Directory {
  let open: Promise<Client> | null = null;
  // What the open connection was made from (in memory only): a changed config or bind password reconnects.
  // The config cache hands out one object per stored version, so only another object is compared by value.
  let openCfg: Readonly<LdapConfig> | null = null;
  let openFor = '';

  const forget = () => {
    open = null;
    openCfg = null;
    openFor = '';
  };
  /** Closes `conn` if it is still the open connection (a request that saw it fail must not close its successor). */
  const drop = async (conn: Promise<Client> | null) => {
    if (!conn || conn !== open) return;
    forget();
    await conn.then((c) => c.unbind()).catch(() => undefined);
  };
  const openWith = (cfg: Readonly<LdapConfig>): Promise<Client> => {
    // A failure to connect or bind is the directory's answer (502), scrubbed of the bind password.
    const mine = connect(cfg, bindName(cfg), cfg.bindpass).catch((err: unknown) => {
      throw directoryError('connecting to the directory failed', err, [cfg.bindpass]);
    });
    open = mine;
    openCfg = cfg;
    openFor = JSON.stringify(cfg);
    mine.catch(() => {
      if (open === mine) forget();
    });
    return mine;
  };

  const get = async (): Promise<{ conn: Promise<Client>; client: Client }> => {
    const cfg = await current();
    if (open && cfg !== openCfg) {
      if (JSON.stringify(cfg) === openFor) openCfg = cfg;
      else await drop(open);
    }
    const conn = open ?? openWith(cfg);
    const client = await conn;
    if (client.isBound) return { conn, client };
    // The server closed it since (an idle timeout, a restart). ldapts would reconnect on the next
    // operation but unbound, and every write would be refused: open a bound one instead.
    await drop(conn);
    const fresh = open ?? openWith(cfg);
    return { conn: fresh, client: await fresh };
  };

  const dir: Directory = {
    async use(fn) {
      const { conn, client } = await get();
      try {
        return await fn(client);
      } catch (err) {
        // A result code is the server's answer; anything else may have broken the connection.
        if (!(err instanceof ResultCodeError)) await drop(conn);
        throw err;
      }
    },
    async findDn(name, dn) {
      const cfg = await current();
      if (dn) {
        await dir.use((c) => c.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] }));
        return dn;
      }
      if (!cfg.userdn) throw badRequest('userdn: must be configured to find entries by name');
      const attr = cfg.userattr || SCHEMAS[cfg.schema].userattr;
      const found = await dir.use((c) => c.search(cfg.userdn, { scope: 'sub', filter: new EqualityFilter({ attribute: attr, value: name }), attributes: ['1.1'], sizeLimit: 2 }));
      if (found.searchEntries.length === 0) throw badRequest(`no entry with ${attr}=${name} under ${cfg.userdn}`);
      if (found.searchEntries.length > 1) throw badRequest(`more than one entry with ${attr}=${name} under ${cfg.userdn}`);
      return found.searchEntries[0]!.dn;
    },
    async setPassword(dn, password) {
      const cfg = await current();
      await dir.use((c) => c.modify(dn, passwordChanges(cfg.schema, password)));
    },
    close: () => drop(open),
  };
  return dir;
}
