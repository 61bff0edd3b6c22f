/**
 * The server configuration file (`strongroom server --config FILE`), HCL or
 * JSON, in Vault's shape:
 *
 *   storage "level" { path = "/var/lib/strongroom" }
 *   listener "tcp" {
 *     address       = "0.0.0.0:8200"
 *     tls_cert_file = "/etc/strongroom/tls.crt"
 *     tls_key_file  = "/etc/strongroom/tls.key"
 *   }
 *   api_addr = "https://vault.example.com:8200"
 *
 * A listener serves TLS unless `tls_disable` says otherwise, so a typo in
 * `tls_disable` fails closed (certificate files are then required). Keys this
 * server does not use (telemetry, seal, ...) are reported as warnings, not
 * errors, so Vault configs load. Values are wire-lenient like Vault's:
 * `tls_disable = "true"` or `1` work. Errors name the file and the field.
 */
import { readFile } from 'node:fs/promises';
import { badRequest, parseDuration, parseDurationMs } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import { blocksOf, parseHcl, type HclObject, type HclValue } from '../hcl/parse.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_LISTENER_ADDRESS = '127.0.0.1:8200';
export const DEFAULT_MAX_REQUEST_SIZE = 32 * 1024 * 1024;
/** Vault's system default and maximum lease TTL: 768h (32 days). */
export const DEFAULT_LEASE_TTL_SECONDS = 768 * 3600;

export interface TcpListenerConfig {
  type: 'tcp';
  address: string;
  host: string;
  port: number;
  tlsDisable: boolean;
  /** Present whenever `tlsDisable` is false. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** Bytes. */
  maxRequestSize: number;
  /** Requests must carry `X-Service-Request: true` (or `X-Vault-Request`). */
  requireRequestHeader: boolean;
}
export type ListenerConfig = TcpListenerConfig;

export type StorageConfig =
  | { type: 'level'; path: string }
  | { type: 'inmem' }
  | { type: 'postgresql'; connectionUrl: string; haEnabled: boolean; table?: string; haTable?: string; maxParallel?: number };

export interface Config {
  listeners: ListenerConfig[];
  storage: StorageConfig;
  apiAddr?: string;
  clusterName?: string;
  pluginDirectory?: string;
  logLevel: LogLevel;
  /** Seconds. */
  defaultLeaseTtl: number;
  maxLeaseTtl: number;
  /** Accepted for compatibility; the UI is not served. */
  ui: boolean;
  /** Accepted for compatibility; Node cannot mlock. */
  disableMlock: boolean;
  /** Revocation retry schedule (`lease_revocation` block); absent keys keep the expiration manager's defaults. */
  leaseRevocation: { retryBaseMs?: number; maxAttempts?: number };
  /** Keys that were ignored, one message each, for the start-up log. */
  warnings: string[];
}

const TRUE = new Set(['1', 't', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'f', 'false', 'no', 'off', '']);
const lenientBool = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  if (v === 1) return true;
  if (v === 0) return false;
  return v;
}, z.boolean({ message: 'must be a boolean' }));

const lenientInt = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.number({ message: 'must be an integer' }).int('must be an integer'),
);

const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseDuration(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as "768h", "30m" or a number of seconds' });
    return z.NEVER;
  }
});

const durationMs = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseDurationMs(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as "10s" or "250ms"' });
    return z.NEVER;
  }
});

const nonEmpty = z.string({ message: 'must be a string' }).trim().min(1, 'must not be empty');

const tcpListenerSchema = z.object({
  address: nonEmpty.optional(),
  tls_cert_file: nonEmpty.optional(),
  tls_key_file: nonEmpty.optional(),
  tls_disable: lenientBool.optional(),
  max_request_size: lenientInt.refine((n) => n >= 0, 'must be 0 (the default, 32 MiB) or a positive number of bytes').optional(),
  require_request_header: lenientBool.optional(),
});

/** Not in Vault: how a failing revocation is retried before its lease becomes irrevocable. */
const leaseRevocationSchema = z.object({
  retry_base: durationMs.refine((ms) => ms >= 10, 'must be at least 10ms').optional(),
  max_attempts: lenientInt.refine((n) => n >= 1 && n <= 100, 'must be between 1 and 100').optional(),
});

const storageSchemas = {
  level: z.object({ path: nonEmpty }),
  inmem: z.object({}),
  postgresql: z.object({
    connection_url: nonEmpty,
    ha_enabled: lenientBool.optional(),
    table: z.string({ message: 'must be a string' }).regex(/^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a SQL identifier (letters, digits, _), optionally schema-qualified').optional(),
    ha_table: z.string({ message: 'must be a string' }).regex(/^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a SQL identifier (letters, digits, _), optionally schema-qualified').optional(),
    max_parallel: lenientInt.refine((n) => n >= 1 && n <= 1000, 'must be between 1 and 1000').optional(),
  }),
} as const;

const topSchema = z.object({
  api_addr: nonEmpty.optional(),
  cluster_name: nonEmpty.optional(),
  plugin_directory: nonEmpty.optional(),
  log_level: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` })).optional(),
  default_lease_ttl: duration.optional(),
  max_lease_ttl: duration.optional(),
  ui: lenientBool.optional(),
  disable_mlock: lenientBool.optional(),
});

/** Top-level keys handled outside `topSchema`. */
const BLOCK_KEYS = new Set(['listener', 'storage', 'backend', 'lease_revocation']);

/** Keeps known keys for zod, reports the others as warnings. */
function splitKnown(body: HclObject, shape: Record<string, unknown>, where: string, warnings: string[]): Record<string, HclValue> {
  const known: Record<string, HclValue> = {};
  for (const key of Object.keys(body)) {
    if (Object.hasOwn(shape, key)) known[key] = body[key] as HclValue;
    else warnings.push(`${where}${where ? '.' : ''}${key}: not used by this server; ignored`);
  }
  return known;
}

function validate<T extends z.ZodType>(schema: T, input: unknown, source: string, where: string): z.output<T> {
  const res = schema.safeParse(input);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
  const field = [where, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.');
  const missing = issue?.code === 'invalid_type' && issue.path.length > 0 && typeof input === 'object' && input !== null && !Object.hasOwn(input, String(issue.path[0]));
  throw badRequest(`${source}: ${field}: ${missing ? 'is required' : (issue?.message ?? 'invalid')}`);
}

/** `host:port` or `[v6]:port`. */
function splitAddress(address: string, source: string, where: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw badRequest(`${source}: ${where}.address: must be host:port, e.g. "127.0.0.1:8200"`);
  return { host: (m[1] ?? m[2] ?? '') || '0.0.0.0', port };
}

/** Parse and validate a configuration document. `source` (the file name) prefixes every error. */
export function parseConfig(text: string, source = 'config'): Config {
  const doc = parseHcl(text, { source });
  const warnings: string[] = [];
  const fail = (message: string): never => {
    throw badRequest(`${source}: ${message}`);
  };

  const listenerBlocks = blocksOf(doc.listener, 1);
  if (listenerBlocks === null) fail('listener: expected blocks like listener "tcp" { address = "127.0.0.1:8200" }');
  if (!listenerBlocks || listenerBlocks.length === 0) return fail('listener: at least one listener "tcp" block is required');
  const listeners = listenerBlocks.map((blk, i): ListenerConfig => {
    const type = blk.labels[0] as string;
    const where = `listener.${type}[${i}]`;
    if (type !== 'tcp') fail(`${where}: unsupported listener type "${type}" (only "tcp")`);
    const v = validate(tcpListenerSchema, splitKnown(blk.body, tcpListenerSchema.shape, where, warnings), source, where);
    const address = v.address ?? DEFAULT_LISTENER_ADDRESS;
    const tlsDisable = v.tls_disable ?? false;
    if (!tlsDisable && (!v.tls_cert_file || !v.tls_key_file)) {
      fail(`${where}: tls_cert_file and tls_key_file are required unless tls_disable = true`);
    }
    const listener: TcpListenerConfig = {
      type: 'tcp',
      address,
      ...splitAddress(address, source, where),
      tlsDisable,
      maxRequestSize: v.max_request_size || DEFAULT_MAX_REQUEST_SIZE,
      requireRequestHeader: v.require_request_header ?? false,
    };
    if (!tlsDisable) {
      listener.tlsCertFile = v.tls_cert_file;
      listener.tlsKeyFile = v.tls_key_file;
    }
    return listener;
  });

  // `backend` is Vault's older name for `storage`.
  if (doc.storage !== undefined && doc.backend !== undefined) fail('storage: give either "storage" or "backend", not both');
  const storageBlocks = blocksOf(doc.storage ?? doc.backend, 1);
  if (storageBlocks === null) fail('storage: expected a block like storage "level" { path = "..." }');
  if (!storageBlocks || storageBlocks.length !== 1) return fail('storage: exactly one storage block is required');
  const storageBlock = storageBlocks[0] as (typeof storageBlocks)[number];
  const storageType = storageBlock.labels[0] as string;
  const storageWhere = `storage.${storageType}`;
  let storage: StorageConfig;
  if (storageType === 'level') {
    const v = validate(storageSchemas.level, splitKnown(storageBlock.body, storageSchemas.level.shape, storageWhere, warnings), source, storageWhere);
    storage = { type: 'level', path: v.path };
  } else if (storageType === 'inmem') {
    splitKnown(storageBlock.body, storageSchemas.inmem.shape, storageWhere, warnings);
    storage = { type: 'inmem' };
  } else if (storageType === 'postgresql') {
    const v = validate(storageSchemas.postgresql, splitKnown(storageBlock.body, storageSchemas.postgresql.shape, storageWhere, warnings), source, storageWhere);
    storage = { type: 'postgresql', connectionUrl: v.connection_url, haEnabled: v.ha_enabled ?? false };
    if (v.table !== undefined) storage.table = v.table;
    if (v.ha_table !== undefined) storage.haTable = v.ha_table;
    if (v.max_parallel !== undefined) storage.maxParallel = v.max_parallel;
  } else {
    return fail(`${storageWhere}: unsupported storage type "${storageType}" (expected level, inmem or postgresql)`);
  }

  const topInput: HclObject = {};
  for (const key of Object.keys(doc)) if (!BLOCK_KEYS.has(key)) Object.defineProperty(topInput, key, { value: doc[key], enumerable: true });
  const top = validate(topSchema, splitKnown(topInput, topSchema.shape, '', warnings), source, '');
  const defaultLeaseTtl = top.default_lease_ttl || DEFAULT_LEASE_TTL_SECONDS;
  const maxLeaseTtl = top.max_lease_ttl || DEFAULT_LEASE_TTL_SECONDS;
  if (defaultLeaseTtl > maxLeaseTtl) fail('default_lease_ttl: must not be greater than max_lease_ttl');

  const leaseRevocation: Config['leaseRevocation'] = {};
  if (doc.lease_revocation !== undefined) {
    const blocks = blocksOf(doc.lease_revocation, 0);
    if (blocks === null || blocks.length !== 1) return fail('lease_revocation: expected one block like lease_revocation { retry_base = "10s" max_attempts = 6 }');
    const body = (blocks[0] as (typeof blocks)[number]).body;
    const v = validate(leaseRevocationSchema, splitKnown(body, leaseRevocationSchema.shape, 'lease_revocation', warnings), source, 'lease_revocation');
    if (v.retry_base !== undefined) leaseRevocation.retryBaseMs = v.retry_base;
    if (v.max_attempts !== undefined) leaseRevocation.maxAttempts = v.max_attempts;
  }

  const config: Config = {
    listeners,
    leaseRevocation,
    storage,
    logLevel: top.log_level ?? 'info',
    defaultLeaseTtl,
    maxLeaseTtl,
    ui: top.ui ?? false,
    disableMlock: top.disable_mlock ?? false,
    warnings,
  };
  if (top.api_addr !== undefined) config.apiAddr = top.api_addr;
  if (top.cluster_name !== undefined) config.clusterName = top.cluster_name;
  if (top.plugin_directory !== undefined) config.pluginDirectory = top.plugin_directory;
  return config;
}

/** Read and parse a configuration file (HCL or JSON: the parser reads both, whatever the extension). */
export async function loadConfig(file: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw badRequest(`${file}: cannot read the configuration file (${code})`);
  }
  return parseConfig(text, file);
}
