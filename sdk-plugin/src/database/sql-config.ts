/**
 * The connection config shared by the SQL database plugins (Vault's
 * connutil.SQLConnectionProducer fields) and the `{{username}}`/`{{password}}`
 * templating of connection_url. The rendered URL holds a password: it is
 * handed to the driver only, never logged, returned or put in an error.
 */
import { z } from 'zod';
import { validationError } from '../define-backend.js';
import { f } from '../fields.js';
import { validateTemplate } from '../kit/template.js';

export const sqlConnectionFields = {
  connection_url: f.string().refine((s) => s.trim() !== '', 'must not be empty'),
  username: f.string().default(''),
  password: f.sensitive(f.string()).default(''),
  max_open_connections: f.int({ min: 0 }).default(4),
  /** 0: as many as max_open_connections. */
  max_idle_connections: f.int({ min: 0 }).default(0),
  /** Seconds; 0: connections are kept until idle. */
  max_connection_lifetime: f.duration().default(0),
  username_template: f.string().default(''),
  disable_escaping: f.bool().default(false),
};

const commonSchema = z.looseObject(sqlConnectionFields);
export type SqlConnectionConfig = z.output<typeof commonSchema>;

/** Parses a connection config with the plugin's own extra fields; unknown keys pass through untouched (the engine's own fields travel in the same object). */
export function parseSqlConfig<S extends z.ZodRawShape>(config: Record<string, unknown>, extra: S): SqlConnectionConfig & z.output<z.ZodObject<S>> {
  const r = z.looseObject({ ...sqlConnectionFields, ...extra }).safeParse(config);
  if (!r.success) throw validationError(r.error, config);
  const out = r.data as SqlConnectionConfig & z.output<z.ZodObject<S>>;
  if (out.max_open_connections === 0) out.max_open_connections = 4;
  if (out.max_idle_connections === 0 || out.max_idle_connections > out.max_open_connections) out.max_idle_connections = out.max_open_connections;
  if (out.username_template) validateTemplate(out.username_template, { DisplayName: 'display', RoleName: 'role' }, { field: 'username_template' });
  return out;
}

/** connection_url with `{{username}}`/`{{password}}` substituted, URL-escaped unless disable_escaping. */
export function renderConnectionUrl(url: string, creds: { username: string; password: string; disableEscaping: boolean }): string {
  const esc = (s: string) => (creds.disableEscaping ? s : encodeURIComponent(s));
  return url.replace(/\{\{\s*(username|password)\s*\}\}/g, (_m, key: string) => esc(key === 'username' ? creds.username : creds.password));
}
