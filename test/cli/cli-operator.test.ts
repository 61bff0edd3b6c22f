/**
 * The `strongroom` CLI against a production-config server: `operator init`,
 * `unseal`, `seal`, `status` (exit 2 while sealed), `key-status`,
 * `step-down`, `generate-root -decode`, plugin register/deregister and the
 * `lease` verbs on leases of a real plugin process.
 */
import { cliRunner, ok } from '../helpers/cli';
import { LEASE_PLUGIN_MAIN } from '../helpers/lease-plugin';
import { externalPlugin, type ExternalPlugin } from '../helpers/plugins';
import { scratchDir, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(300_000);

let s: RunningServer;
let cli: ReturnType<typeof cliRunner>;
let pluginDir: string;
let lease: ExternalPlugin;
const run = (...args: string[]) => cli.run(args);

beforeAll(async () => {
  pluginDir = scratchDir('sr-cli-plugins-');
  lease = externalPlugin(pluginDir, 'lease-test', LEASE_PLUGIN_MAIN);
  s = await startConfigServer(`storage "level" { path = "$DIR/data" }
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
}
plugin_directory = "${pluginDir}"
`);
  cli = cliRunner({ addr: s.url });
});

afterAll(async () => {
  await s.stop();
});

describe('operator', () => {
  let keys: string[] = [];
  let root = '';

  it('init -status, init, status (2 while sealed), unseal (argument and stdin), seal', async () => {
    const st = await run('operator', 'init', '-status');
    expect(st.code).toBe(2);
    expect(st.stdout).toContain('not initialized');
    const init = ok(await run('operator', 'init', '-key-shares=3', '-key-threshold=2'));
    keys = [...init.stdout.matchAll(/^Unseal Key \d: (\S+)$/gm)].map((m) => m[1]!);
    root = /^Initial Root Token: (\S+)$/m.exec(init.stdout)![1]!;
    expect(keys).toHaveLength(3);
    expect((await run('operator', 'init', '-status')).code).toBe(0);
    expect((await run('operator', 'init')).code).toBe(2); // already initialized

    const sealed = await run('status');
    expect(sealed.code).toBe(2);
    expect(sealed.stdout).toMatch(/Sealed\s+true/);
    expect(sealed.stdout).toMatch(/Unseal Progress\s+0\/2/);
    const one = ok(await run('operator', 'unseal', keys[0]!));
    expect(one.stdout).toMatch(/Unseal Progress\s+1\/2/);
    ok(await run('operator', 'unseal', '-reset'));
    ok(await run('operator', 'unseal', keys[0]!));
    const two = ok(await cli.run(['operator', 'unseal'], { input: `${keys[1]}\n` }));
    expect(two.stdout).toMatch(/Sealed\s+false/);
    expect((await run('status')).code).toBe(0);

    cli = cliRunner({ addr: s.url, token: root });
    s.rootToken = root;
    expect(ok(await run('operator', 'seal')).stdout).toContain('Success! Strongroom is sealed.');
    expect((await run('status')).code).toBe(2);
    const badKey = await run('operator', 'unseal', 'not-a-key');
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('Error unsealing');
    for (const k of keys.slice(1)) ok(await run('operator', 'unseal', k));
    expect((await run('status')).code).toBe(0);
  });

  it('key-status, step-down, generate-root -decode; rekey and generate-root report what the server answers', async () => {
    const ks = ok(await run('operator', 'key-status'));
    expect(ks.stdout).toMatch(/Key Term\s+1/);
    expect(JSON.parse(ok(await run('operator', 'key-status', '-format=json')).stdout).term).toBe(1);
    expect(ok(await run('operator', 'step-down')).stdout).toContain('Success! Stepped down.');
    // Vault's encoding: base64(token XOR otp).
    const token = 'srs.AAAAAAAAAAAAAAAAAAAAAAAA';
    const otp = 'abcdefghijklmnopqrstuvwxyz01';
    const encoded = Buffer.from([...Buffer.from(token)].map((b, i) => b ^ otp.charCodeAt(i))).toString('base64');
    expect(ok(await run('operator', 'generate-root', `-decode=${encoded}`, `-otp=${otp}`)).stdout.trim()).toBe(`Root token: ${token}`);
    expect((await run('operator', 'generate-root', `-decode=${encoded}`)).code).toBe(1);
    expect((await run('operator', 'rekey', keys[0]!)).code).toBe(1); // -nonce required
    for (const args of [['operator', 'rekey', '-status'], ['operator', 'generate-root', '-status']]) {
      const r = await run(...args);
      // Rekey and root generation belong to another issue: until the server has them, the CLI reports its answer (exit 2).
      expect([0, 2]).toContain(r.code);
      if (r.code === 2) expect(r.stderr).toMatch(/Code: 404/);
      else expect(r.stdout).toMatch(/Started\s+false/);
    }
  });
});

describe('plugins and leases on a plugin process', () => {
  let leaseId = '';

  it('plugin register, info, list, deregister', async () => {
    const sha = lease.sha256;
    expect(ok(await run('plugin', 'register', `-sha256=${sha}`, `-command=${lease.command}`, '-version=v1.0.0', 'secret', 'lease-test')).stdout).toContain('Success! Registered plugin: lease-test');
    ok(await run('plugin', 'register', `-sha256=${sha}`, `-command=${lease.command}`, '-version=v1.0.1', 'secret', 'lease-test'));
    expect(ok(await run('plugin', 'info', '-version=v1.0.0', '-field=sha256', 'secret', 'lease-test')).stdout.trim()).toBe(sha);
    expect(ok(await run('plugin', 'list', 'secret')).stdout).toMatch(/^lease-test$/m);
    expect(ok(await run('plugin', 'list', '-detailed')).stdout).toMatch(/^lease-test\s+secret\s+v1\.0\.1/m);
    ok(await run('plugin', 'deregister', '-version=v1.0.1', 'secret', 'lease-test'));
    expect((await run('plugin', 'info', '-version=v1.0.1', 'secret', 'lease-test')).code).toBe(2);
    const bad = await run('plugin', 'register', '-sha256=00', '-version=v1.0.0', 'secret', 'x');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('sha256');
  });

  it('lease lookup, renew -increment, revoke, revoke -prefix, revoke -prefix -force', async () => {
    ok(await run('secrets', 'enable', '-path=lt', '-plugin-version=v1.0.0', 'lease-test'));
    expect((await s.api('POST', 'lt/roles/r', { ttl: '1h', max_ttl: '2h' })).status).toBeLessThan(300);
    const creds = JSON.parse(ok(await run('read', '-format=json', 'lt/creds/r')).stdout);
    leaseId = creds.lease_id;
    expect(leaseId).toMatch(/^lt\/creds\/r\//);
    const table = ok(await run('read', 'lt/creds/r')).stdout;
    expect(table).toMatch(/^lease_id\s+lt\/creds\/r\//m);
    const look = JSON.parse(ok(await run('lease', 'lookup', '-format=json', leaseId)).stdout).data;
    expect(look.id).toBe(leaseId);
    expect(look.renewable).toBe(true);
    const renewed = ok(await run('lease', 'renew', '-increment=30m', '-field=lease_duration', leaseId));
    expect(Number(renewed.stdout.trim())).toBeGreaterThan(0);
    expect(Number(renewed.stdout.trim())).toBeLessThanOrEqual(1800);
    expect(ok(await run('lease', 'revoke', '-sync', leaseId)).stdout).toContain(`Success! Revoked lease: ${leaseId}`);
    expect((await run('lease', 'lookup', leaseId)).code).toBe(2);

    const more = [JSON.parse(ok(await run('read', '-format=json', 'lt/creds/r')).stdout).lease_id, JSON.parse(ok(await run('read', '-format=json', 'lt/creds/r')).stdout).lease_id];
    ok(await run('lease', 'revoke', '-prefix', '-sync', 'lt/creds/'));
    for (const id of more) expect((await run('lease', 'lookup', id)).code).toBe(2);
    const last = JSON.parse(ok(await run('read', '-format=json', 'lt/creds/r')).stdout).lease_id;
    expect(ok(await run('lease', 'revoke', '-prefix', '-force', 'lt/')).stdout).toContain('Force revoked');
    expect((await run('lease', 'lookup', last)).code).toBe(2);
  });
});

describe('namespace and unwrap verbs', () => {
  it('namespace create, list, lookup, patch, delete; unwrap', async () => {
    ok(await run('namespace', 'create', 'team-a'));
    expect(ok(await run('namespace', 'list')).stdout).toContain('team-a/');
    expect(ok(await run('namespace', 'lookup', '-format=json', 'team-a')).stdout).toContain('team-a/');
    ok(await run('namespace', 'patch', '-custom-metadata=owner=ops', 'team-a'));
    expect(JSON.parse(ok(await run('namespace', 'lookup', '-format=json', 'team-a')).stdout).data.custom_metadata).toEqual({ owner: 'ops' });
    ok(await run('namespace', 'delete', 'team-a'));
    const wrapped = await s.api('POST', 'sys/wrapping/wrap', { a: 'b' }, { headers: { 'X-Vault-Wrap-TTL': '5m' } });
    expect(wrapped.status).toBe(200);
    expect(ok(await run('unwrap', '-field=a', wrapped.body.wrap_info.token)).stdout.trim()).toBe('b');
    const r = await run('unwrap', 'abc');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Error unwrapping');
  });
});
