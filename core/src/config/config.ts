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
 * `tls_disable` fails closed (certificate files are then required). Every key
 * is checked: an unknown block or key (a misspelt `adress`), a Vault feature
 * this server does not have (`ha_storage`, a cloud KMS seal, ...), a wrong type, or a
 * missing file the config refers to stops the server at start. Nothing is
 * silently ignored. Values are wire-lenient like Vault's: `tls_disable =
 * "true"` or `1` work. Errors name the file, the key and its line.
 */
import { readFile } from 'node:fs/promises';
import { badRequest } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import { readFileSync, statSync } from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { dirname } from 'node:path';
import { blockLineOf, blocksOf, lineOf, parseHcl, type HclObject, type HclValue } from '../hcl/parse.js';
import { duration, durationMs, lenientBool, lenientInt, nonEmpty } from '../hcl/values.js';
import { STORAGE_BACKENDS, storageSchema, type StorageConfig } from '../storage/registry.js';
import { SealKeyError, STANZA as STATIC_STANZA, loadStaticSeal, type StaticSeal, type StaticSealStanza } from '../seal/static-seal.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const DEFAULT_LISTENER_ADDRESS = '127.0.0.1:8200';
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
  /** OpenBao's listener switches: the unauthenticated sys/generate-root/* and sys/rekey/* are not served here. */
  disableUnauthedGenerateRootEndpoints: boolean;
  disableUnauthedRekeyEndpoints: boolean;
  /** `telemetry { unauthenticated_metrics_access = true }` in the listener: sys/metrics needs no token here. */
  unauthenticatedMetricsAccess?: boolean;
}
export type ListenerConfig = TcpListenerConfig;

export const LOG_FORMATS = ['standard', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** `log_requests_level`: the level request lines are logged at, or off. */
export const REQUEST_LOG_LEVELS = [...LOG_LEVELS, 'off'] as const;

export interface TelemetryConfig {
  /** Seconds; 0 turns the Prometheus format of sys/metrics off (Vault's meaning). Default 24h. */
  prometheusRetentionTime: number;
  /** Without it, every series carries a `host` label with this machine's name (Vault prefixes the name instead). */
  disableHostname: boolean;
  /** The first part of every series' name; absent: `strongroom`. `"vault"` gives Vault's names. */
  metricsPrefix?: string;
}

export interface Config {
  listeners: ListenerConfig[];
  storage: StorageConfig;
  apiAddr?: string;
  clusterName?: string;
  pluginDirectory?: string;
  logLevel: LogLevel;
  logFormat?: LogFormat;
  /** Logs are appended here as well as written to stderr. */
  logFile?: string;
  /** Level of the one-line log of each request; default debug. */
  logRequestsLevel?: (typeof REQUEST_LOG_LEVELS)[number];
  telemetry: TelemetryConfig;
  /** Seconds. */
  defaultLeaseTtl: number;
  maxLeaseTtl: number;
  /** Serve the web UI at /ui/ (Vault's `ui`); off unless set. */
  ui: boolean;
  /** Accepted for compatibility; Node cannot mlock. */
  disableMlock: boolean;
  /** Standbys of an HA cluster forward every request instead of serving reads themselves. */
  disableStandbyReads?: boolean;
  /** Revocation retry schedule (`lease_revocation` block); absent keys keep the expiration manager's defaults. */
  leaseRevocation: { retryBaseMs?: number; maxAttempts?: number };
  /** Scheduled snapshots (`snapshot` block): one every `intervalMs` into `path`, the newest `retain` kept. */
  snapshot?: { intervalMs: number; path: string; retain: number };
  /** The change-event log and subscriber buffers (`events` block); absent keys keep the defaults. */
  events: { logMaxEvents?: number; logMaxAgeMs?: number; subscriberBuffer?: number };
  /** `seal "static" { ... }` as written; absent: Shamir. */
  seal?: StaticSealStanza;
  /** The seal's keys, read when the config is loaded from a file (`checkFiles`). */
  staticSeal?: StaticSeal;
}

const tcpListenerSchema = z.object({
  address: nonEmpty.optional(),
  tls_cert_file: nonEmpty.optional(),
  tls_key_file: nonEmpty.optional(),
  tls_disable: lenientBool.optional(),
  max_request_size: lenientInt.refine((n) => n >= 0, 'must be 0 (the default, 32 MiB) or a positive number of bytes').optional(),
  require_request_header: lenientBool.optional(),
  disable_unauthed_generate_root_endpoints: lenientBool.optional(),
  disable_unauthed_rekey_endpoints: lenientBool.optional(),
  /** A nested block, checked with `listenerTelemetrySchema`. */
  telemetry: z.unknown().optional(),
});

const listenerTelemetrySchema = z.object({
  unauthenticated_metrics_access: lenientBool.optional(),
});

/** OpenBao's static seal: key sources (file:// or env://), never keys. */
const staticSealSchema = z.object({
  current_key_id: nonEmpty,
  current_key: nonEmpty,
  previous_key_id: nonEmpty.optional(),
  previous_key: nonEmpty.optional(),
  disabled: lenientBool.optional(),
});

/** Not in Vault: how a failing revocation is retried before its lease becomes irrevocable. */
const leaseRevocationSchema = z.object({
  retry_base: durationMs.refine((ms) => ms >= 10, 'must be at least 10ms').optional(),
  max_attempts: lenientInt.refine((n) => n >= 1 && n <= 100, 'must be between 1 and 100').optional(),
});

/** Not in Vault's open-source server: scheduled snapshots of the store (sys/storage/snapshot's format). */
const snapshotSchema = z.object({
  interval: durationMs.refine((ms) => ms >= 1000, 'must be at least 1s'),
  path: nonEmpty,
  retain: lenientInt.refine((n) => n >= 1 && n <= 10_000, 'must be between 1 and 10000').optional(),
});

/** Not in Vault: how much of the change-event stream is kept for Last-Event-ID, and per subscriber. */
const eventsSchema = z.object({
  log_max_events: lenientInt.refine((n) => n >= 1 && n <= 1_000_000, 'must be between 1 and 1000000').optional(),
  log_max_age: durationMs.refine((ms) => ms >= 1000, 'must be at least 1s').optional(),
  subscriber_buffer: lenientInt.refine((n) => n >= 1 && n <= 1_000_000, 'must be between 1 and 1000000').optional(),
});

const telemetrySchema = z.object({
  prometheus_retention_time: duration.optional(),
  disable_hostname: lenientBool.optional(),
  metrics_prefix: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'must be a Prometheus name part: letters, digits and _, not starting with a digit').optional(),
});

const topSchema = z.object({
  api_addr: nonEmpty.optional(),
  cluster_name: nonEmpty.optional(),
  plugin_directory: nonEmpty.optional(),
  log_level: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` })).optional(),
  log_format: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(LOG_FORMATS, { message: 'must be "standard" or "json"' })).optional(),
  log_file: nonEmpty.optional(),
  log_requests_level: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(REQUEST_LOG_LEVELS, { message: `must be one of ${REQUEST_LOG_LEVELS.join(', ')}` })).optional(),
  default_lease_ttl: duration.optional(),
  max_lease_ttl: duration.optional(),
  ui: lenientBool.optional(),
  disable_mlock: lenientBool.optional(),
  disable_standby_reads: lenientBool.optional(),
});

/** Top-level keys handled outside `topSchema`. */
const BLOCK_KEYS = new Set(['listener', 'storage', 'backend', 'lease_revocation', 'telemetry', 'snapshot', 'events', 'seal']);

/** Vault keys this server refuses by name, with the reason. */
const UNSUPPORTED: Record<string, string> = {
  ha_storage: 'a separate HA storage is not supported; use storage "postgresql" { ha_enabled = true }',
  service_registration: 'service registration is not supported',
  entropy: 'external entropy is not supported',
  user_lockout: 'user lockout is not supported',
  cluster_addr: 'request forwarding between nodes is not supported; standbys redirect to api_addr',
  disable_clustering: 'request forwarding between nodes is not supported',
  raw_storage_endpoint: 'sys/raw is not supported',
  introspection_endpoint: 'sys/internal/inspect is not supported',
  pid_file: 'pid files are not supported; use the service manager',
};

/** Edit distance, for "did you mean" on misspelt keys. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length]![b.length]!;
}

const at = (line: number | undefined) => (line === undefined ? '' : ` (line ${line})`);

/** Refuses any key of `body` outside `known`, naming it, its line and the nearest known key. */
function checkKnown(body: HclObject, known: Iterable<string>, source: string, where: string): void {
  const names = [...known];
  for (const key of Object.keys(body)) {
    if (names.includes(key)) continue;
    const field = `${where}${where ? '.' : ''}${key}`;
    const line = lineOf(body, key) ?? blockLineOf(body);
    if (!where && Object.hasOwn(UNSUPPORTED, key)) throw badRequest(`${source}: ${field}: not supported: ${UNSUPPORTED[key]}${at(line)}`);
    const near = names.filter((n) => distance(n, key) <= 2).sort((a, b) => distance(a, key) - distance(b, key))[0];
    throw badRequest(`${source}: ${field}: unknown key${near ? ` (did you mean "${near}"?)` : ''}${at(line)}`);
  }
}

/** Keeps known keys for zod after refusing the others. */
function known(body: HclObject, shape: Record<string, unknown>, source: string, where: string): Record<string, HclValue> {
  checkKnown(body, Object.keys(shape), source, where);
  return body as Record<string, HclValue>;
}

function validate<T extends z.ZodType>(schema: T, input: Record<string, HclValue>, source: string, where: string, linesOf: object = input): z.output<T> {
  const res = schema.safeParse(input);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
  const field = [where, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.');
  const key = issue?.path.length ? String(issue.path[0]) : undefined;
  const missing = issue?.code === 'invalid_type' && key !== undefined && !Object.hasOwn(input, key);
  const line = (key !== undefined ? lineOf(linesOf, key) : undefined) ?? blockLineOf(linesOf);
  throw badRequest(`${source}: ${field}: ${missing ? 'is required' : (issue?.message ?? 'invalid')}${at(line)}`);
}

/** `host:port` or `[v6]:port`. */
function splitAddress(address: string, source: string, where: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw badRequest(`${source}: ${where}.address: must be host:port, e.g. "127.0.0.1:8200"`);
  return { host: (m[1] ?? m[2] ?? '') || '0.0.0.0', port };
}

/** Parse and validate a configuration document. `source` (the file name) prefixes every error. */
export function parseConfig(text: string, source = 'config', opts: { checkFiles?: boolean } = {}): Config {
  const doc = parseHcl(text, { source });
  const fail = (message: string, line?: number): never => {
    throw badRequest(`${source}: ${message}${at(line)}`);
  };
  checkKnown(doc, [...Object.keys(topSchema.shape), ...BLOCK_KEYS], source, '');
  /** A file or directory the config refers to must exist now, not fail later at first use. */
  const requireFile = (path: string, field: string, line: number | undefined, kind: 'file' | 'directory'): void => {
    let st;
    try {
      st = statSync(path);
    } catch (err) {
      return fail(`${field}: ${kind} "${path}" cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, line);
    }
    if (kind === 'file' ? !st.isFile() : !st.isDirectory()) fail(`${field}: "${path}" is not a ${kind}`, line);
  };

  const listenerBlocks = blocksOf(doc.listener, 1);
  if (listenerBlocks === null) fail('listener: expected blocks like listener "tcp" { address = "127.0.0.1:8200" }');
  if (!listenerBlocks || listenerBlocks.length === 0) return fail('listener: at least one listener "tcp" block is required');
  const listeners = listenerBlocks.map((blk, i): ListenerConfig => {
    const type = blk.labels[0] as string;
    const where = `listener.${type}[${i}]`;
    if (type !== 'tcp') fail(`${where}: unsupported listener type "${type}" (only "tcp")`, blockLineOf(blk.body));
    const v = validate(tcpListenerSchema, known(blk.body, tcpListenerSchema.shape, source, where), source, where);
    const address = v.address ?? DEFAULT_LISTENER_ADDRESS;
    const tlsDisable = v.tls_disable ?? false;
    if (!tlsDisable && (!v.tls_cert_file || !v.tls_key_file)) {
      fail(`${where}: tls_cert_file and tls_key_file are required unless tls_disable = true`, blockLineOf(blk.body));
    }
    const listener: TcpListenerConfig = {
      type: 'tcp',
      address,
      ...splitAddress(address, source, where),
      tlsDisable,
      maxRequestSize: v.max_request_size || DEFAULT_MAX_REQUEST_SIZE,
      requireRequestHeader: v.require_request_header ?? false,
      // Vault's behaviour by default: the key shares are the credential.
      disableUnauthedGenerateRootEndpoints: v.disable_unauthed_generate_root_endpoints ?? false,
      disableUnauthedRekeyEndpoints: v.disable_unauthed_rekey_endpoints ?? false,
    };
    if (v.telemetry !== undefined) {
      const blocks = blocksOf(v.telemetry as HclValue, 0);
      if (blocks === null || blocks.length !== 1) fail(`${where}.telemetry: expected one block like telemetry { unauthenticated_metrics_access = true }`, lineOf(blk.body, 'telemetry'));
      const body = blocks![0]!.body;
      const t = validate(listenerTelemetrySchema, known(body, listenerTelemetrySchema.shape, source, `${where}.telemetry`), source, `${where}.telemetry`);
      if (t.unauthenticated_metrics_access !== undefined) listener.unauthenticatedMetricsAccess = t.unauthenticated_metrics_access;
    }
    if (!tlsDisable) {
      listener.tlsCertFile = v.tls_cert_file;
      listener.tlsKeyFile = v.tls_key_file;
      if (opts.checkFiles) {
        for (const key of ['tls_cert_file', 'tls_key_file'] as const) requireFile(v[key]!, `${where}.${key}`, lineOf(blk.body, key), 'file');
        checkTlsPair(v.tls_cert_file!, v.tls_key_file!, where, (key, msg) => fail(`${where}.${key}: ${msg}`, lineOf(blk.body, key)));
      }
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
  const storageBlockSchema = storageSchema(storageType);
  if (!storageBlockSchema) {
    return fail(`${storageWhere}: unsupported storage type "${storageType}" (expected ${STORAGE_BACKENDS.join(', ')})`, blockLineOf(storageBlock.body) ?? lineOf(doc, doc.storage !== undefined ? 'storage' : 'backend'));
  }
  const storage = { type: storageType, config: validate(storageBlockSchema, known(storageBlock.body, storageBlockSchema.shape, source, storageWhere), source, storageWhere) } as StorageConfig;

  const topInput: HclObject = {};
  for (const key of Object.keys(doc)) if (!BLOCK_KEYS.has(key)) Object.defineProperty(topInput, key, { value: doc[key], enumerable: true });
  const top = validate(topSchema, topInput, source, '', doc);
  const defaultLeaseTtl = top.default_lease_ttl || DEFAULT_LEASE_TTL_SECONDS;
  const maxLeaseTtl = top.max_lease_ttl || DEFAULT_LEASE_TTL_SECONDS;
  if (defaultLeaseTtl > maxLeaseTtl) fail('default_lease_ttl: must not be greater than max_lease_ttl', lineOf(doc, 'default_lease_ttl'));

  const leaseRevocation: Config['leaseRevocation'] = {};
  if (doc.lease_revocation !== undefined) {
    const blocks = blocksOf(doc.lease_revocation, 0);
    if (blocks === null || blocks.length !== 1) return fail('lease_revocation: expected one block like lease_revocation { retry_base = "10s" max_attempts = 6 }', lineOf(doc, 'lease_revocation'));
    const body = (blocks[0] as (typeof blocks)[number]).body;
    const v = validate(leaseRevocationSchema, known(body, leaseRevocationSchema.shape, source, 'lease_revocation'), source, 'lease_revocation');
    if (v.retry_base !== undefined) leaseRevocation.retryBaseMs = v.retry_base;
    if (v.max_attempts !== undefined) leaseRevocation.maxAttempts = v.max_attempts;
  }

  const events: Config['events'] = {};
  if (doc.events !== undefined) {
    const blocks = blocksOf(doc.events, 0);
    if (blocks === null || blocks.length !== 1) return fail('events: expected one block like events { log_max_events = 10000 log_max_age = "10m" subscriber_buffer = 1024 }', lineOf(doc, 'events'));
    const body = (blocks[0] as (typeof blocks)[number]).body;
    const v = validate(eventsSchema, known(body, eventsSchema.shape, source, 'events'), source, 'events');
    if (v.log_max_events !== undefined) events.logMaxEvents = v.log_max_events;
    if (v.log_max_age !== undefined) events.logMaxAgeMs = v.log_max_age;
    if (v.subscriber_buffer !== undefined) events.subscriberBuffer = v.subscriber_buffer;
  }

  const telemetry: TelemetryConfig = { prometheusRetentionTime: 24 * 3600, disableHostname: false };
  if (doc.telemetry !== undefined) {
    const blocks = blocksOf(doc.telemetry, 0);
    if (blocks === null || blocks.length !== 1) return fail('telemetry: expected one block like telemetry { prometheus_retention_time = "24h" }', lineOf(doc, 'telemetry'));
    const body = (blocks[0] as (typeof blocks)[number]).body;
    const v = validate(telemetrySchema, known(body, telemetrySchema.shape, source, 'telemetry'), source, 'telemetry');
    if (v.prometheus_retention_time !== undefined) telemetry.prometheusRetentionTime = v.prometheus_retention_time;
    if (v.disable_hostname !== undefined) telemetry.disableHostname = v.disable_hostname;
    if (v.metrics_prefix !== undefined) telemetry.metricsPrefix = v.metrics_prefix;
  }

  let snapshot: Config['snapshot'];
  if (doc.snapshot !== undefined) {
    const blocks = blocksOf(doc.snapshot, 0);
    if (blocks === null || blocks.length !== 1) return fail('snapshot: expected one block like snapshot { interval = "1h" path = "/var/backups/strongroom" retain = 24 }', lineOf(doc, 'snapshot'));
    const body = (blocks[0] as (typeof blocks)[number]).body;
    const v = validate(snapshotSchema, known(body, snapshotSchema.shape, source, 'snapshot'), source, 'snapshot');
    snapshot = { intervalMs: v.interval, path: v.path, retain: v.retain ?? 1 };
    if (opts.checkFiles) requireFile(v.path, 'snapshot.path', lineOf(body, 'path'), 'directory');
  }

  let seal: StaticSealStanza | undefined;
  if (doc.seal !== undefined) {
    const blocks = blocksOf(doc.seal, 1);
    if (blocks === null) return fail('seal: expected a block like seal "static" { current_key_id = "..." current_key = "file://..." }', lineOf(doc, 'seal'));
    if (blocks.length !== 1) return fail('seal: exactly one seal block is allowed (to migrate back to Shamir, keep it with disabled = "true")', lineOf(doc, 'seal'));
    const blk = blocks[0]!;
    const type = blk.labels[0] as string;
    if (type !== 'static') return fail(`seal "${type}": unsupported seal type (only "static": cloud KMS and HSM seals are not supported)`, blockLineOf(blk.body) ?? lineOf(doc, 'seal'));
    const v = validate(staticSealSchema, known(blk.body, staticSealSchema.shape, source, STATIC_STANZA), source, STATIC_STANZA);
    if ((v.previous_key_id === undefined) !== (v.previous_key === undefined)) fail(`${STATIC_STANZA}: previous_key_id and previous_key go together`, blockLineOf(blk.body));
    if (v.previous_key_id !== undefined && v.previous_key_id === v.current_key_id) fail(`${STATIC_STANZA}: previous_key_id must differ from current_key_id`, lineOf(blk.body, 'previous_key_id'));
    seal = { currentKeyId: v.current_key_id, currentKey: v.current_key, disabled: v.disabled ?? false };
    if (v.previous_key_id !== undefined) Object.assign(seal, { previousKeyId: v.previous_key_id, previousKey: v.previous_key });
  }
  let staticSeal: StaticSeal | undefined;
  if (seal && opts.checkFiles) {
    try {
      staticSeal = loadStaticSeal(seal);
    } catch (err) {
      if (err instanceof SealKeyError) fail(err.message);
      throw err;
    }
  }

  if (opts.checkFiles) {
    if (top.plugin_directory !== undefined) requireFile(top.plugin_directory, 'plugin_directory', lineOf(doc, 'plugin_directory'), 'directory');
    if (top.log_file !== undefined) requireFile(top.log_file.endsWith('/') ? top.log_file : dirname(top.log_file), 'log_file', lineOf(doc, 'log_file'), 'directory');
  }

  const config: Config = {
    listeners,
    leaseRevocation,
    events,
    storage,
    logLevel: top.log_level ?? 'info',
    defaultLeaseTtl,
    maxLeaseTtl,
    ui: top.ui ?? false,
    disableMlock: top.disable_mlock ?? false,
    telemetry,
  };
  if (snapshot) config.snapshot = snapshot;
  if (top.log_format !== undefined) config.logFormat = top.log_format;
  if (top.log_file !== undefined) config.logFile = top.log_file;
  if (top.log_requests_level !== undefined) config.logRequestsLevel = top.log_requests_level;
  if (top.api_addr !== undefined) config.apiAddr = top.api_addr;
  if (top.disable_standby_reads !== undefined) config.disableStandbyReads = top.disable_standby_reads;
  if (top.cluster_name !== undefined) config.clusterName = top.cluster_name;
  if (top.plugin_directory !== undefined) config.pluginDirectory = top.plugin_directory;
  if (seal) config.seal = seal;
  if (staticSeal) config.staticSeal = staticSeal;
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
  return parseConfig(text, file, { checkFiles: true });
}

/**
 * The listener's certificate and key parse, and belong together: found at
 * start, naming the file and its config key, rather than as a TLS library's
 * message when the listener opens. The key's content never goes in a message.
 */
function checkTlsPair(certFile: string, keyFile: string, where: string, fail: (key: 'tls_cert_file' | 'tls_key_file', msg: string) => void): void {
  let cert: X509Certificate | undefined;
  let key: KeyObject | undefined;
  const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).replace(/^error:[0-9A-F]+:/, '');
  try {
    cert = new X509Certificate(readFileSync(certFile));
  } catch (err) {
    fail('tls_cert_file', `"${certFile}" is not a PEM certificate (${reason(err)})`);
  }
  try {
    key = createPrivateKey(readFileSync(keyFile));
  } catch (err) {
    fail('tls_key_file', `"${keyFile}" is not a PEM private key (${reason(err)})`);
  }
  if (cert && key && !cert.checkPrivateKey(key)) fail('tls_key_file', `"${keyFile}" is not the private key of ${where}.tls_cert_file "${certFile}"`);
}
