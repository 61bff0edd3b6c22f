/**
 * `strongroom server -config=FILE` with a bad config stops at start with exit
 * code 1 and a message naming the key and its line: one case per error class
 * (unknown key, unknown block, refused Vault block, wrong type, missing file,
 * syntax error, bad flag). A good config with every supported key starts.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../helpers/processes';
import { BIN, scratchDir, startConfigServer } from '../helpers/server';
import { makeTestPki } from '../helpers/tls';

jest.setTimeout(120_000);

function startWith(config: string, extra: string[] = [], files: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const dir = scratchDir('sr-badcfg-');
  const file = join(dir, 'server.hcl');
  writeFileSync(file, config.replace(/\$DIR/g, dir));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return new Promise((res) => {
    execFile(process.execPath, [BIN, 'server', `-config=${file}`, ...extra], { env: { ...process.env, TMPDIR: dir }, timeout: 30_000 }, (err, stdout, stderr) =>
      res({ code: err ? ((err as { code?: unknown }).code as number | null) : 0, stdout, stderr }),
    );
  });
}

const GOOD_STORAGE = 'storage "level" {\n  path = "$DIR/data"\n}';
const GOOD_LISTENER = 'listener "tcp" {\n  address = "127.0.0.1:1"\n  tls_disable = true\n}';

describe('a bad server config stops the server at start (exit 1), naming the key and its line', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['a misspelt key in a block', `${GOOD_STORAGE}\nlistener "tcp" {\n  adress = "127.0.0.1:8200"\n  tls_disable = true\n}`, /listener\.tcp\[0\]\.adress: unknown key \(did you mean "address"\?\) \(line 5\)/],
    ['an unknown top-level key', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nmax_lease_tl = "1h"`, /max_lease_tl: unknown key \(did you mean "max_lease_ttl"\?\) \(line 8\)/],
    ['an unknown block', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nreplication {\n  x = 1\n}`, /replication: unknown key \(line 8\)/],
    ['a Vault seal this server refuses by name', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nseal "transit" {\n  address = "x"\n}`, /seal "transit": unsupported seal type \(only "static".* \(line 8\)/],
    ['a static seal whose key file is missing', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nseal "static" {\n  current_key_id = "a"\n  current_key = "file://$DIR/missing.key"\n}`, /seal "static": current_key: the key file ".*missing\.key" cannot be read \(ENOENT\)/],
    ['an unknown telemetry key', `${GOOD_STORAGE}\n${GOOD_LISTENER}\ntelemetry {\n  statsd_address = "127.0.0.1:8125"\n}`, /telemetry\.statsd_address: unknown key \(line 9\)/],
    ['a wrong type', `${GOOD_STORAGE}\n${GOOD_LISTENER}\ndefault_lease_ttl = true`, /default_lease_ttl: .* \(line 8\)/],
    ['a wrong boolean', `${GOOD_STORAGE}\nlistener "tcp" {\n  tls_disable = "sometimes"\n}`, /listener\.tcp\[0\]\.tls_disable: must be a boolean \(line 5\)/],
    ['a missing certificate file', `${GOOD_STORAGE}\nlistener "tcp" {\n  address = "127.0.0.1:1"\n  tls_cert_file = "$DIR/missing.crt"\n  tls_key_file = "$DIR/missing.key"\n}`, /listener\.tcp\[0\]\.tls_cert_file: file ".*missing\.crt" cannot be read \(ENOENT\) \(line 6\)/],
    ['a missing plugin directory', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nplugin_directory = "$DIR/plugins"`, /plugin_directory: directory ".*plugins" cannot be read \(ENOENT\) \(line 8\)/],
    ['a syntax error', `${GOOD_STORAGE}\nlistener "tcp" {\n  address = \n}`, /parse error at line 6, column 1/],
    ['a bad log_format', `${GOOD_STORAGE}\n${GOOD_LISTENER}\nlog_format = "xml"`, /log_format: must be "standard" or "json" \(line 8\)/],
  ];
  it.each(cases)('%s', async (_name, config, message) => {
    const r = await startWith(config);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('server.hcl');
  });

  it('a TLS certificate or key that does not parse, or a key of another certificate, names the file and its key', async () => {
    const pki = makeTestPki();
    const other = makeTestPki();
    const tls = (cert: string, key: string) => `${GOOD_STORAGE}\nlistener "tcp" {\n  address = "127.0.0.1:1"\n  tls_cert_file = "$DIR/${cert}"\n  tls_key_file = "$DIR/${key}"\n}`;
    const files = { 'good.crt': pki.certPem, 'good.key': pki.keyPem, 'other.key': other.keyPem, 'garbage.pem': 'not a PEM file\n' };
    const badCert = await startWith(tls('garbage.pem', 'good.key'), [], files);
    expect(badCert.code).toBe(1);
    expect(badCert.stderr).toMatch(/listener\.tcp\[0\]\.tls_cert_file: ".*garbage\.pem" is not a PEM certificate \(.+\) \(line 6\)/);
    const badKey = await startWith(tls('good.crt', 'garbage.pem'), [], files);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/listener\.tcp\[0\]\.tls_key_file: ".*garbage\.pem" is not a PEM private key \(.+\) \(line 7\)/);
    const mismatch = await startWith(tls('good.crt', 'other.key'), [], files);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toMatch(/listener\.tcp\[0\]\.tls_key_file: ".*other\.key" is not the private key of listener\.tcp\[0\]\.tls_cert_file ".*good\.crt" \(line 7\)/);
    for (const r of [badCert, badKey, mismatch]) expect(r.stderr).not.toContain('PRIVATE KEY');
  });

  it('an unknown server flag and a bad -log-format also exit 1', async () => {
    const r = await startWith(`${GOOD_STORAGE}\n${GOOD_LISTENER}`, ['-log-levle=debug']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('flag provided but not defined: -log-levle');
    const f = await startWith(`${GOOD_STORAGE}\n${GOOD_LISTENER}`, ['-log-format=xml']);
    expect(f.code).toBe(1);
    expect(f.stderr).toContain('-log-format');
  });

  it('storage "file" from a Vault config starts on the embedded LevelDB store at that path, and says so', async () => {
    const s = await startConfigServer(`storage "file" { path = "$DIR/vault-data" }
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
}
`);
    const dataDir = join(s.configFile, '..', 'vault-data');
    expect(s.output()).toContain(`storage file (from a Vault config) is served by Strongroom's embedded LevelDB store at ${dataDir}`);
    expect(s.output()).toContain("not Vault's file layout");
    const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    expect(init.status).toBe(200);
    s.rootToken = init.body.root_token;
    expect((await s.api('POST', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
    expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv' })).status).toBe(204);
    expect((await s.api('PUT', 'kv/x', { v: '1' })).status).toBe(204);
    expect((await s.api('GET', 'kv/x')).body.data).toEqual({ v: '1' });
    // LevelDB's own files are what is at the path.
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['CURRENT', 'LOCK']));
    await s.stop();
  });

  it('a config with every supported key starts; log_format and log_file apply', async () => {
    const dir = scratchDir('sr-goodcfg-');
    const s = await startConfigServer(`storage "level" { path = "$DIR/data" }
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
  max_request_size = 1048576
  require_request_header = false
}
api_addr = "http://127.0.0.1:$PORT"
cluster_name = "test"
plugin_directory = "${dir}"
default_lease_ttl = "1h"
max_lease_ttl = "24h"
disable_mlock = true
ui = false
log_level = "info"
log_format = "standard"
log_file = "$DIR/strongroom.log"
log_requests_level = "info"
telemetry {
  prometheus_retention_time = "0s"
  disable_hostname = true
}
lease_revocation {
  retry_base = "1s"
  max_attempts = 3
}
`);
    const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    expect(init.status).toBe(200);
    s.rootToken = init.body.root_token;
    expect((await s.api('POST', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
    // prometheus_retention_time = 0 turns the Prometheus format off, as in Vault; JSON stays.
    const prom = await s.api('GET', 'sys/metrics?format=prometheus');
    expect(prom.status).toBe(400);
    expect(prom.body.errors[0]).toContain('prometheus');
    expect((await s.api('GET', 'sys/metrics')).status).toBe(200);
    // Request lines come at info (log_requests_level); the helper starts with -log-level=warn, so the request
    // logger is raised to info to let them through, in the standard (one-line, not JSON) format.
    expect((await s.api('POST', 'sys/loggers/request', { level: 'info' })).status).toBe(204);
    await s.api('GET', 'sys/mounts');
    const logFile = join(s.configFile, '..', 'strongroom.log');
    const text = await waitFor('the request line in log_file', () => {
      const t = readFileSync(logFile, 'utf8');
      return t.includes('[INFO] request') && t.includes('sys/mounts') ? t : false;
    });
    expect(text).not.toContain(s.rootToken);
    expect(s.output()).toMatch(/\[INFO\] request .*"path":"sys\/mounts"/);
    await s.stop();
  });
});
