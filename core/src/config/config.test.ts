import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorOf } from '@strongroom/sdk-plugin/host';
import { DEFAULT_LEASE_TTL_SECONDS, DEFAULT_MAX_REQUEST_SIZE, loadConfig, parseConfig } from './config.js';

const FULL_HCL = `
# production
ui            = false
disable_mlock = true
api_addr      = "https://sr.example.com:8200"
cluster_name  = "prod"
disable_standby_reads = true
plugin_directory = "/opt/strongroom/plugins"
log_level     = "DEBUG"
default_lease_ttl = "1h"
max_lease_ttl     = "768h"

storage "postgresql" {
  connection_url = "postgres://sr@db/sr"
  ha_enabled     = "true"
  table          = "vault_kv_store"
  ha_table       = "ha.locks"
  max_parallel   = "8"
  ha_lock_ttl    = "2s"
}

listener "tcp" {
  address       = "0.0.0.0:8200"
  tls_cert_file = "/etc/sr/tls.crt"
  tls_key_file  = "/etc/sr/tls.key"
  max_request_size = 1048576
  require_request_header = true
  disable_unauthed_generate_root_endpoints = true
  disable_unauthed_rekey_endpoints = "true"
}

listener "tcp" {
  address     = "[::1]:8201"
  tls_disable = 1
}

telemetry {
  prometheus_retention_time = "12h"
  disable_hostname = true
}
log_format = "standard"
log_requests_level = "info"
log_file = "/var/log/strongroom.log"
`;

describe('parseConfig', () => {
  it('reads a full HCL configuration', () => {
    expect(parseConfig(FULL_HCL, 'sr.hcl')).toEqual({
      listeners: [
        {
          type: 'tcp',
          address: '0.0.0.0:8200',
          host: '0.0.0.0',
          port: 8200,
          tlsDisable: false,
          tlsCertFile: '/etc/sr/tls.crt',
          tlsKeyFile: '/etc/sr/tls.key',
          maxRequestSize: 1048576,
          requireRequestHeader: true,
          disableUnauthedGenerateRootEndpoints: true,
          disableUnauthedRekeyEndpoints: true,
        },
        {
          type: 'tcp',
          address: '[::1]:8201',
          host: '::1',
          port: 8201,
          tlsDisable: true,
          maxRequestSize: DEFAULT_MAX_REQUEST_SIZE,
          requireRequestHeader: false,
          disableUnauthedGenerateRootEndpoints: false,
          disableUnauthedRekeyEndpoints: false,
        },
      ],
      storage: { type: 'postgresql', config: { connection_url: 'postgres://sr@db/sr', ha_enabled: true, table: 'vault_kv_store', ha_table: 'ha.locks', max_parallel: 8, ha_lock_ttl: 2000 } },
      apiAddr: 'https://sr.example.com:8200',
      disableStandbyReads: true,
      clusterName: 'prod',
      pluginDirectory: '/opt/strongroom/plugins',
      logLevel: 'debug',
      defaultLeaseTtl: 3600,
      maxLeaseTtl: 768 * 3600,
      ui: false,
      disableMlock: true,
      leaseRevocation: {},
      events: {},
      telemetry: { prometheusRetentionTime: 12 * 3600, disableHostname: true },
      logFormat: 'standard',
      logRequestsLevel: 'info',
      logFile: '/var/log/strongroom.log',
    });
  });

  it('reads the same configuration from JSON, in both listener shapes', () => {
    const json = JSON.stringify({
      storage: { level: { path: '/data' } },
      listener: [{ tcp: { address: '127.0.0.1:8200', tls_disable: 'true' } }, { tcp: { address: ':9000', tls_disable: true } }],
      default_lease_ttl: 60,
    });
    const cfg = parseConfig(json, 'sr.json');
    expect(cfg.storage).toEqual({ type: 'level', config: { path: '/data' } });
    expect(cfg.listeners.map((l) => [l.host, l.port, l.tlsDisable])).toEqual([
      ['127.0.0.1', 8200, true],
      ['0.0.0.0', 9000, true],
    ]);
    expect(cfg.defaultLeaseTtl).toBe(60);
    const single = parseConfig(JSON.stringify({ storage: { inmem: {} }, listener: { tcp: { tls_disable: true } } }));
    expect(single.listeners[0]?.address).toBe('127.0.0.1:8200');
  });

  it('applies the defaults', () => {
    const cfg = parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }');
    expect(cfg).toMatchObject({
      storage: { type: 'inmem', config: {} },
      logLevel: 'info',
      defaultLeaseTtl: DEFAULT_LEASE_TTL_SECONDS,
      maxLeaseTtl: DEFAULT_LEASE_TTL_SECONDS,
      ui: false,
      disableMlock: false,
      leaseRevocation: {},
      events: {},
      telemetry: { prometheusRetentionTime: 24 * 3600, disableHostname: false },
    });
    expect(cfg.apiAddr).toBeUndefined();
  });

  it('turns the web UI on with ui = true', () => {
    expect(parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nui = true').ui).toBe(true);
    expect(parseConfig(JSON.stringify({ storage: { inmem: {} }, listener: { tcp: { tls_disable: true } }, ui: 'true' })).ui).toBe(true);
  });

  it('reads telemetry.metrics_prefix and a listener\'s telemetry { unauthenticated_metrics_access }, and refuses unknown keys in both', () => {
    const cfg = parseConfig('storage "inmem" {}\nlistener "tcp" {\n  tls_disable = true\n  telemetry {\n    unauthenticated_metrics_access = true\n  }\n}\ntelemetry { metrics_prefix = "vault" }');
    expect(cfg.telemetry.metricsPrefix).toBe('vault');
    expect(cfg.listeners[0]?.unauthenticatedMetricsAccess).toBe(true);
    expect(() => parseConfig('storage "inmem" {}\nlistener "tcp" {\n  tls_disable = true\n  telemetry { unauthenticated_metric_access = true }\n}')).toThrow(/listener\.tcp\[0\]\.telemetry\.unauthenticated_metric_access: unknown key \(did you mean "unauthenticated_metrics_access"\?\)/);
    expect(() => parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\ntelemetry { metrics_prefix = "va-ult" }')).toThrow(/telemetry\.metrics_prefix: must be a Prometheus name part/);
  });

  it('reads the change-event log and subscriber buffer sizes', () => {
    const cfg = parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nevents {\n  log_max_events = 500\n  log_max_age = "2m"\n  subscriber_buffer = 16\n}');
    expect(cfg.events).toEqual({ logMaxEvents: 500, logMaxAgeMs: 120_000, subscriberBuffer: 16 });
    expect(() => parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nevents { subscriber_buffer = 0 }', 'sr.hcl')).toThrow(/sr\.hcl: events\.subscriber_buffer: must be between 1 and 1000000/);
    expect(() => parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nevents { buffer = 3 }', 'sr.hcl')).toThrow(/events/);
  });

  it('reads the lease revocation retry schedule, in milliseconds', () => {
    const cfg = parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nlease_revocation {\n  retry_base = "250ms"\n  max_attempts = 3\n}');
    expect(cfg.leaseRevocation).toEqual({ retryBaseMs: 250, maxAttempts: 3 });
    expect(parseConfig('storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nlease_revocation { retry_base = 2 }').leaseRevocation).toEqual({ retryBaseMs: 2000 });
  });

  it('reads the snapshot schedule (interval in ms, retain 1 unless set) and names a bad key', () => {
    const base = 'storage "inmem" {}\nlistener "tcp" { tls_disable = true }\n';
    expect(parseConfig(`${base}snapshot {\n  interval = "1h"\n  path = "/b"\n  retain = 24\n}`).snapshot).toEqual({ intervalMs: 3_600_000, path: '/b', retain: 24 });
    expect(parseConfig(`${base}snapshot { interval = "30s"\n path = "/b" }`).snapshot).toEqual({ intervalMs: 30_000, path: '/b', retain: 1 });
    expect(parseConfig(base).snapshot).toBeUndefined();
    expect(() => parseConfig(`${base}snapshot { interval = "soon"\n path = "/b" }`, 'sr.hcl')).toThrow(/sr\.hcl: snapshot\.interval: must be a duration/);
    expect(() => parseConfig(`${base}snapshot { interval = "100ms"\n path = "/b" }`, 'sr.hcl')).toThrow(/snapshot\.interval: must be at least 1s/);
    expect(() => parseConfig(`${base}snapshot { interval = "1h" }`, 'sr.hcl')).toThrow(/snapshot\.path/);
    expect(() => parseConfig(`${base}snapshot { interval = "1h"\n path = "/b"\n retain = 0 }`, 'sr.hcl')).toThrow(/snapshot\.retain: must be between 1 and 10000/);
    expect(() => parseConfig(`${base}snapshot { interval = "1h"\n path = "/b"\n retian = 2 }`, 'sr.hcl')).toThrow(/snapshot\.retian: unknown key \(did you mean "retain"\?\)/);
  });

  it('accepts Vault\'s storage "file" as the embedded LevelDB store at its path', () => {
    expect(parseConfig('storage "file" { path = "/var/lib/vault" }\nlistener "tcp" { tls_disable = true }').storage).toEqual({ type: 'file', config: { path: '/var/lib/vault' } });
  });

  it('accepts "backend" as the old name of "storage"', () => {
    expect(parseConfig('backend "level" { path = "/d" }\nlistener "tcp" { tls_disable = true }').storage).toEqual({ type: 'level', config: { path: '/d' } });
  });

  const L = 'listener "tcp" { tls_disable = true }';
  const S = 'storage "inmem" {}';
  const bad: Array<[string, string, RegExp]> = [
    ['no listener', S, /sr\.hcl: listener: at least one listener/],
    ['a too small retry base', `${L}\n${S}\nlease_revocation { retry_base = "1ms" }`, /sr\.hcl: lease_revocation\.retry_base: must be at least 10ms/],
    ['zero revocation attempts', `${L}\n${S}\nlease_revocation { max_attempts = 0 }`, /sr\.hcl: lease_revocation\.max_attempts: must be between 1 and 100/],
    ['a bad retry duration', `${L}\n${S}\nlease_revocation { retry_base = "soon" }`, /lease_revocation\.retry_base: must be a duration/],
    ['no storage', L, /sr\.hcl: storage: exactly one storage block/],
    ['two storages', `${L}\nstorage "inmem" {}\nstorage "level" { path = "/x" }`, /exactly one storage block/],
    ['storage and backend', `${L}\n${S}\nbackend "inmem" {}`, /either "storage" or "backend"/],
    ['unknown storage type', `${L}\nstorage "consul" {}`, /storage\.consul: unsupported storage type "consul"/],
    ['level without path', `${L}\nstorage "level" {}`, /sr\.hcl: storage\.level\.path: is required/],
    ['postgresql without url', `${L}\nstorage "postgresql" { ha_enabled = true }`, /storage\.postgresql\.connection_url: is required/],
    ['bad table', `${L}\nstorage "postgresql" { connection_url = "x"\n table = "kv; DROP TABLE x" }`, /storage\.postgresql\.table: must be a SQL identifier/],
    ['bad ha_table', `${L}\nstorage "postgresql" { connection_url = "x"\n ha_table = "a.b.c" }`, /storage\.postgresql\.ha_table: must be a SQL identifier/],
    ['ha_lock_ttl too short', `${L}\nstorage "postgresql" { connection_url = "x"\n ha_lock_ttl = "100ms" }`, /storage\.postgresql\.ha_lock_ttl: must be between 1s and 5m/],
    ['bad max_parallel', `${L}\nstorage "postgresql" { connection_url = "x"\n max_parallel = 0 }`, /storage\.postgresql\.max_parallel: must be between 1 and 1000/],
    ['bad ha_enabled', `${L}\nstorage "postgresql" { connection_url = "x"\n ha_enabled = "maybe" }`, /storage\.postgresql\.ha_enabled: must be a boolean/],
    ['unknown listener type', `${S}\nlistener "unix" { address = "/tmp/s" }`, /listener\.unix\[0\]: unsupported listener type/],
    ['TLS without files', `${S}\nlistener "tcp" { address = "0.0.0.0:8200" }`, /listener\.tcp\[0\]: tls_cert_file and tls_key_file are required/],
    ['a misspelt listener key', `${S}\nlistener "tcp" {\n  tls_disable = true\n  adress = "127.0.0.1:8200"\n}`, /sr\.hcl: listener\.tcp\[0\]\.adress: unknown key \(did you mean "address"\?\) \(line 4\)/],
    ['TLS typo fails closed', `${S}\nlistener "tcp" { tls_disabled = true }`, /tls_disabled: unknown key \(did you mean "tls_disable"\?\) \(line 2\)/],
    ['an unknown top-level key', `${S}\n${L}\n\napi_adr = "x"`, /sr\.hcl: api_adr: unknown key \(did you mean "api_addr"\?\) \(line 4\)/],
    ['an unknown block', `${S}\n${L}\nreplication {\n  x = 1\n}`, /sr\.hcl: replication: unknown key \(line 3\)/],
    ['a cloud KMS seal, refused by name', `${S}\n${L}\nseal "awskms" {\n  region = "x"\n}`, /sr\.hcl: seal "awskms": unsupported seal type \(only "static".* \(line 3\)/],
    ['a static seal without its key', `${S}\n${L}\nseal "static" {\n  current_key_id = "k"\n}`, /sr\.hcl: seal "static"\.current_key: is required/],
    ['a static seal key typo', `${S}\n${L}\nseal "static" {\n  current_key_id = "k"\n  current_key = "env://K"\n  previous_kye = "x"\n}`, /sr\.hcl: seal "static"\.previous_kye: unknown key \(did you mean "previous_key"\?\) \(line 6\)/],
    ['a previous key without its id', `${S}\n${L}\nseal "static" {\n  current_key_id = "k"\n  current_key = "env://K"\n  previous_key = "env://J"\n}`, /seal "static": previous_key_id and previous_key go together/],
    ['two seal blocks', `${S}\n${L}\nseal "static" {\n  current_key_id = "k"\n  current_key = "env://K"\n}\nseal "static" {\n  current_key_id = "j"\n  current_key = "env://J"\n}`, /seal: exactly one seal block is allowed/],
    ['a bad ui value', `${S}\n${L}\nui = "sometimes"`, /sr\.hcl: ui: must be a boolean \(line 3\)/],
    ['an unknown storage key', `${L}\nstorage "level" {\n  path = "/d"\n  pathh = "/e"\n}`, /storage\.level\.pathh: unknown key \(did you mean "path"\?\) \(line 4\)/],
    ['an unknown telemetry key', `${S}\n${L}\ntelemetry {\n  statsd_address = "127.0.0.1:8125"\n}`, /telemetry\.statsd_address: unknown key \(line 4\)/],
    ['a bad telemetry type', `${S}\n${L}\ntelemetry {\n  disable_hostname = "perhaps"\n}`, /telemetry\.disable_hostname: must be a boolean \(line 4\)/],
    ['a bad log_format', `${S}\n${L}\nlog_format = "xml"`, /log_format: must be "standard" or "json" \(line 3\)/],
    ['a bad log_requests_level', `${S}\n${L}\nlog_requests_level = "loud"`, /log_requests_level: must be one of trace, debug, info, warn, error, off \(line 3\)/],
    ['a bad postgresql max_parallel', `${L}\nstorage "postgresql" {\n  connection_url = "postgres://x"\n  max_parallel = 0\n}`, /storage\.postgresql\.max_parallel: must be between 1 and 1000 \(line 4\)/],
    ['an unknown postgresql key', `${L}\nstorage "postgresql" {\n  connection_url = "postgres://x"\n  ha_tabel = "t"\n}`, /storage\.postgresql\.ha_tabel: unknown key \(did you mean "ha_table"\?\) \(line 4\)/],
    ['an unknown key in JSON', JSON.stringify({ storage: { inmem: {} }, listener: { tcp: { tls_disable: true } }, adress: 'x' }), /adress: unknown key/],
    ['bad address', `${S}\nlistener "tcp" { address = "localhost"\n tls_disable = true }`, /listener\.tcp\[0\]\.address: must be host:port/],
    ['port out of range', `${S}\nlistener "tcp" { address = "a:70000"\n tls_disable = true }`, /address: must be host:port/],
    ['negative request size', `${S}\nlistener "tcp" { max_request_size = -1\n tls_disable = true }`, /listener\.tcp\[0\]\.max_request_size: must be 0/],
    ['second listener bad', `${S}\n${L}\nlistener "tcp" { tls_disable = "nah" }`, /listener\.tcp\[1\]\.tls_disable: must be a boolean/],
    ['bad log level', `${S}\n${L}\nlog_level = "verbose"`, /sr\.hcl: log_level: must be one of trace, debug, info, warn, error/],
    ['bad duration', `${S}\n${L}\nmax_lease_ttl = "forever"`, /max_lease_ttl: must be a duration/],
    ['default above max', `${S}\n${L}\ndefault_lease_ttl = "2h"\nmax_lease_ttl = "1h"`, /default_lease_ttl: must not be greater than max_lease_ttl/],
    ['wrong type', `${S}\n${L}\napi_addr = 5`, /api_addr: must be a string \(line 3\)/],
    ['syntax error', `${S}\nlistener "tcp" {\n  address = \n}`, /sr\.hcl: parse error at line 4, column 1/],
  ];
  it.each(bad)('refuses %s, naming the file and the field', (_n, text, message) => {
    const err = errorOf(() => parseConfig(text, 'sr.hcl'));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });
});

describe('loadConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sr-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads HCL and JSON files', async () => {
    await writeFile(join(dir, 'a.hcl'), 'storage "level" { path = "/d" }\nlistener "tcp" { tls_disable = true }');
    await writeFile(join(dir, 'b.json'), '{"storage": {"level": {"path": "/d"}}, "listener": {"tcp": {"tls_disable": true}}}');
    const a = await loadConfig(join(dir, 'a.hcl'));
    const b = await loadConfig(join(dir, 'b.json'));
    expect(a).toEqual(b);
    expect(a.storage).toEqual({ type: 'level', config: { path: '/d' } });
  });

  it('refuses a certificate, key, plugin directory or log directory that does not exist, naming the key and its line', async () => {
    const cert = join(dir, 'tls.crt');
    await writeFile(cert, 'x');
    const cases: Array<[string, RegExp]> = [
      [`storage "inmem" {}\nlistener "tcp" {\n  tls_cert_file = "${cert}"\n  tls_key_file = "${join(dir, 'nokey.pem')}"\n}`, /listener\.tcp\[0\]\.tls_key_file: file ".*nokey\.pem" cannot be read \(ENOENT\) \(line 4\)/],
      [`storage "inmem" {}\nlistener "tcp" {\n  tls_cert_file = "${dir}"\n  tls_key_file = "${cert}"\n}`, /tls_cert_file: ".*" is not a file \(line 3\)/],
      [`storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nplugin_directory = "${join(dir, 'noplugins')}"`, /plugin_directory: directory ".*noplugins" cannot be read \(ENOENT\) \(line 3\)/],
      [`storage "inmem" {}\nlistener "tcp" { tls_disable = true }\nlog_file = "${join(dir, 'nodir', 'sr.log')}"`, /log_file: directory ".*nodir" cannot be read \(ENOENT\) \(line 3\)/],
    ];
    for (const [text, message] of cases) {
      const file = join(dir, 'files.hcl');
      await writeFile(file, text);
      await expect(loadConfig(file)).rejects.toThrow(message);
    }
    // parseConfig alone checks no files (it is also used on configs meant for another machine).
    expect(parseConfig(cases[0]![0]).listeners[0]!.tlsKeyFile).toContain('nokey.pem');
  });

  it('names the file in errors', async () => {
    const file = join(dir, 'bad.hcl');
    await writeFile(file, 'storage "level" {}\nlistener "tcp" { tls_disable = true }');
    await expect(loadConfig(file)).rejects.toThrow(`${file}: storage.level.path: is required (line 1)`);
    await expect(loadConfig(join(dir, 'missing.hcl'))).rejects.toThrow(/missing\.hcl: cannot read the configuration file \(ENOENT\)/);
  });
});
