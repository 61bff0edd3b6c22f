/**
 * A real OpenLDAP for tests (scripts/services/kinds/slapd.js through
 * services.ts): the shared private slapd of this run, or a dedicated one for a
 * test that freezes its server. Each test file adds entries of its own (a
 * random tag in their names), so files sharing the server never meet.
 */
import { randomBytes } from 'node:crypto';
import { Attribute, Client, InvalidCredentialsError, NoSuchObjectError } from 'ldapts';
import { dedicatedService, sharedService, type DedicatedService } from './services';

export interface Slapd {
  url: string;
  /** The same server over ldaps:// (a throwaway CA signed its certificate). */
  ldapsUrl: string;
  /** ca.pem, client.pem / client-key.pem (signed by the CA), rogue.pem / rogue-key.pem (self-signed). */
  tlsDir: string;
  base: string;
  adminDn: string;
  adminPassword: string;
  managerDn: string;
  managerPassword: string;
  /** Set on a dedicated instance: its process, to freeze (SIGSTOP) and thaw. */
  pid?: number;
}

const ENV = 'STRONGROOM_TEST_LDAP_URL';

function fromVars(vars: Record<string, string | undefined>, url: string): Slapd {
  const v = (k: string) => {
    const x = vars[k] ?? process.env[k];
    if (!x) throw new Error(`slapd service gave no ${k}`);
    return x;
  };
  const s: Slapd = {
    url,
    ldapsUrl: v('STRONGROOM_TEST_LDAPS_URL'),
    tlsDir: v('STRONGROOM_TEST_LDAP_TLS_DIR'),
    base: v('STRONGROOM_TEST_LDAP_BASE'),
    adminDn: v('STRONGROOM_TEST_LDAP_ADMIN_DN'),
    adminPassword: v('STRONGROOM_TEST_LDAP_ADMIN_PASSWORD'),
    managerDn: v('STRONGROOM_TEST_LDAP_MANAGER_DN'),
    managerPassword: v('STRONGROOM_TEST_LDAP_MANAGER_PASSWORD'),
  };
  if (vars.STRONGROOM_TEST_LDAP_PID) s.pid = Number(vars.STRONGROOM_TEST_LDAP_PID);
  return s;
}

/** The shared slapd of this test run. */
export function sharedSlapd(): Slapd {
  const vars = sharedService('slapd', ENV);
  return fromVars(vars, vars[ENV]!);
}

/** A slapd for one test file alone; drop() it in afterAll. */
export function dedicatedSlapd(): Slapd & { service: DedicatedService } {
  const service = dedicatedService('slapd');
  return { ...fromVars(service.vars, service.url), service };
}

export const tag = () => randomBytes(4).toString('hex');
export const ldapPassword = () => `Lp1${randomBytes(12).toString('hex')}`;

/** Runs `fn` on a connection bound as `dn`; rejects when the bind fails. */
async function asUser<T>(s: Slapd, dn: string, password: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: s.url, connectTimeout: 5000, timeout: 10_000 });
  try {
    await c.bind(dn, password);
    return await fn(c);
  } finally {
    await c.unbind().catch(() => undefined);
  }
}

const asAdmin = <T>(s: Slapd, fn: (c: Client) => Promise<T>) => asUser(s, s.adminDn, s.adminPassword, fn);

/** Whether `dn` binds with `password` (false only on invalid credentials; other errors throw). */
export async function binds(s: Slapd, dn: string, password: string): Promise<boolean> {
  try {
    await asUser(s, dn, password, async () => undefined);
    return true;
  } catch (err) {
    if (err instanceof InvalidCredentialsError) return false;
    throw err;
  }
}

/** Adds a person (cn=<cn>,<parent>) with a password. */
export async function addPerson(s: Slapd, parent: string, cn: string, password: string): Promise<string> {
  const dn = `cn=${cn},${parent}`;
  await asAdmin(s, (c) => c.add(dn, [new Attribute({ type: 'objectClass', values: ['inetOrgPerson'] }), new Attribute({ type: 'cn', values: [cn] }), new Attribute({ type: 'sn', values: [cn] }), new Attribute({ type: 'userPassword', values: [password] })]));
  return dn;
}

/** DNs under `base` whose cn starts with `prefix`. */
export async function entriesWithCnPrefix(s: Slapd, base: string, prefix: string): Promise<string[]> {
  const r = await asAdmin(s, (c) => c.search(base, { scope: 'sub', filter: `(cn=${prefix}*)`, attributes: ['1.1'] }));
  return r.searchEntries.map((e) => e.dn);
}

export async function exists(s: Slapd, dn: string): Promise<boolean> {
  try {
    await asAdmin(s, (c) => c.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] }));
    return true;
  } catch (err) {
    if (err instanceof NoSuchObjectError) return false;
    throw err;
  }
}

/** Deletes entries, ignoring the ones already gone. */
export async function removeEntries(s: Slapd, dns: string[]): Promise<void> {
  await asAdmin(s, async (c) => {
    for (const dn of dns) await c.del(dn).catch(() => undefined);
  });
}
