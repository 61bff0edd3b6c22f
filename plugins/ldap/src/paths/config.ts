/**
 * config (POST, GET, DELETE) and rotate-root. The bind password and the
 * client key are never returned; a write that sets `bindpass` drops a root
 * rotation cut short (the caller's password wins).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { badRequest, definePath, f, type PathDef } from '@strongroom/sdk-plugin';
import { SCHEMAS } from '../directory.js';
import type { Engine } from '../engine.js';
import { DEFAULT_PASSWORD_LENGTH } from '../engine.js';
import type { Rotation } from '../rotation.js';
import type { LdapConfig, Schema } from '../store.js';

const TLS_VERSIONS = ['tls10', 'tls11', 'tls12', 'tls13'] as const;

const fields = {
  binddn: f.string().describe('DN of the entry the engine binds as; it needs rights to search and to change passwords').optional(),
  bindpass: f.sensitive(f.string().describe('Password of binddn; never returned').optional()),
  url: f.string().describe('LDAP URL, or a comma-separated list tried in order on connection errors (default ldap://127.0.0.1)').optional(),
  schema: f.enum(['openldap', 'ad', 'racf']).describe('Directory schema: openldap (default), ad or racf').optional(),
  userdn: f.string().describe('Base DN under which static role and library accounts are searched').optional(),
  userattr: f.string().describe('Attribute matched against account names (default cn, userPrincipalName or racfid by schema)').optional(),
  upndomain: f.string().describe('When set, the engine binds as <binddn>@<upndomain>').optional(),
  connection_timeout: f.duration().describe('Seconds before the next URL is tried (default 30)').optional(),
  request_timeout: f.duration().describe('Seconds a request may take (default 90)').optional(),
  starttls: f.bool().describe('Issue StartTLS after connecting to an ldap:// URL').optional(),
  insecure_tls: f.bool().describe('Skip server certificate verification').optional(),
  certificate: f.string().describe('PEM CA certificate the server certificate is checked against').optional(),
  client_tls_cert: f.string().describe('PEM client certificate').optional(),
  client_tls_key: f.sensitive(f.string().describe('PEM client key; never returned').optional()),
  tls_min_version: f.enum(TLS_VERSIONS).describe('Minimum TLS version (default tls12)').optional(),
  tls_max_version: f.enum(TLS_VERSIONS).describe('Maximum TLS version (default tls12)').optional(),
  length: f.deprecated(f.int({ min: 4, max: 100 }).describe('Deprecated: length of generated passwords (default 64); excludes password_policy').optional()),
  password_policy: f.string().describe('Password policy for generated passwords; excludes length; need not exist until used').optional(),
  case_sensitive_names: f.bool().describe('Whether names are case sensitive (default false)').optional(),
};

const DEFAULTS: LdapConfig = {
  binddn: '',
  bindpass: '',
  url: 'ldap://127.0.0.1',
  schema: 'openldap',
  userdn: '',
  userattr: '',
  upndomain: '',
  connection_timeout: 30,
  request_timeout: 90,
  starttls: false,
  insecure_tls: false,
  certificate: '',
  client_tls_cert: '',
  client_tls_key: '',
  tls_min_version: 'tls12',
  tls_max_version: 'tls12',
  length: 0,
  password_policy: '',
  case_sensitive_names: false,
  last_bind_password_rotation: 0,
};

function checkUrls(url: string) {
  const urls = url.split(',').map((u) => u.trim());
  if (urls.some((u) => u === '')) throw badRequest('url: empty entry in the list');
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw badRequest(`url: invalid URL ${JSON.stringify(u)}`);
    }
    if (parsed.protocol !== 'ldap:' && parsed.protocol !== 'ldaps:') throw badRequest(`url: ${JSON.stringify(u)} is not an ldap:// or ldaps:// URL`);
  }
}

function checkPem(field: string, pem: string, kind: 'cert' | 'key') {
  if (!pem) return;
  try {
    if (kind === 'cert') new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    throw badRequest(`${field}: not a PEM ${kind === 'cert' ? 'certificate' : 'private key'}`);
  }
}

export function configPaths(engine: Engine, rotation: Rotation): PathDef[] {
  const { store } = engine;

  const config = definePath({
    pattern: 'config',
    fields,
    synopsis: 'Configure the directory connection.',
    existenceCheck: async () => (await store.config.get()) !== null,
    operations: {
      read: {
        summary: 'Read the configuration (without bindpass and client_tls_key).',
        handler: async () => {
          const c = await store.config.get();
          if (!c) return null;
          return {
            data: {
              binddn: c.binddn,
              url: c.url,
              schema: c.schema,
              userdn: c.userdn,
              userattr: c.userattr || SCHEMAS[c.schema].userattr,
              upndomain: c.upndomain,
              connection_timeout: c.connection_timeout,
              request_timeout: c.request_timeout,
              starttls: c.starttls,
              insecure_tls: c.insecure_tls,
              certificate: c.certificate,
              client_tls_cert: c.client_tls_cert,
              tls_min_version: c.tls_min_version,
              tls_max_version: c.tls_max_version,
              length: c.password_policy ? c.length : c.length || DEFAULT_PASSWORD_LENGTH,
              password_policy: c.password_policy,
              case_sensitive_names: c.case_sensitive_names,
              ...(c.last_bind_password_rotation ? { last_bind_password_rotation: new Date(c.last_bind_password_rotation).toISOString() } : {}),
            },
          };
        },
      },
      update: {
        summary: 'Write the configuration; on an existing one, fields not sent keep their values.',
        handler: async (req) =>
          engine.mutex.run('config', async () => {
            const d = req.data as Record<string, unknown>;
            const has = (k: string) => req.provided.has(k) && d[k] !== undefined;
            const existing = await store.config.get();
            const next: LdapConfig = { ...DEFAULTS, ...(existing ?? {}) };
            for (const k of Object.keys(fields) as Array<keyof typeof fields>) if (has(k)) (next as unknown as Record<string, unknown>)[k] = d[k];
            if (!next.binddn) throw badRequest('binddn: missing required field');
            if (!next.bindpass) throw badRequest('bindpass: missing required field');
            if (has('length') && has('password_policy') && next.length && next.password_policy) throw badRequest('length: cannot be set together with password_policy');
            // One of them replaces the other on an update.
            if (has('password_policy') && next.password_policy && !has('length')) next.length = 0;
            if (has('length') && next.length && !has('password_policy')) next.password_policy = '';
            if (next.length && next.password_policy) throw badRequest('length: cannot be set together with password_policy');
            checkUrls(next.url);
            checkPem('certificate', next.certificate, 'cert');
            checkPem('client_tls_cert', next.client_tls_cert, 'cert');
            checkPem('client_tls_key', next.client_tls_key, 'key');
            if (Boolean(next.client_tls_cert) !== Boolean(next.client_tls_key)) throw badRequest('client_tls_cert: client_tls_cert and client_tls_key go together');
            if (TLS_VERSIONS.indexOf(next.tls_min_version as (typeof TLS_VERSIONS)[number]) > TLS_VERSIONS.indexOf(next.tls_max_version as (typeof TLS_VERSIONS)[number])) {
              throw badRequest('tls_min_version: cannot be above tls_max_version');
            }
            if (next.connection_timeout <= 0) next.connection_timeout = DEFAULTS.connection_timeout;
            if (next.request_timeout <= 0) next.request_timeout = DEFAULTS.request_timeout;
            next.schema = next.schema as Schema;
            await store.config.put(next);
            if (has('bindpass')) await store.rootWal.delete();
            await engine.directory.close();
            return null;
          }),
      },
      delete: {
        summary: 'Delete the configuration.',
        handler: async () =>
          engine.mutex.run('config', async () => {
            await store.config.delete();
            await store.rootWal.delete();
            await engine.directory.close();
            return null;
          }),
      },
    },
  });

  const rotateRoot = definePath({
    pattern: 'rotate-root',
    synopsis: "Rotate the bind entry's password; only the engine knows the new one.",
    operations: {
      update: {
        summary: 'Set a new bind password in the directory and keep it.',
        handler: async () => {
          await rotation.rotateRoot();
          return null;
        },
      },
    },
  });

  return [config, rotateRoot];
}
