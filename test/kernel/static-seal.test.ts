/**
 * The static seal end to end, through the real binary and its kv plugin
 * process, on LevelDB and on PostgreSQL storage: init with recovery keys and
 * auto-unseal (also after a restart and after sys/seal, with recovery keys),
 * generate-root with the recovery keys, rekey of the recovery keys, key
 * rotation with previous_key (records rewrapped: the old key can then go),
 * migration Shamir -> static and static -> Shamir with -migrate keeping the
 * data, a wrong / missing / malformed key stopping the server with a message
 * naming the stanza, the key never in storage or the log, a loose key file
 * warned about, (PostgreSQL, HA) a standby that unseals itself, and (LevelDB)
 * a snapshot taken under Shamir restored after the move to static keeping
 * today's seal.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { postgresUrl } from '../helpers/databases';
import { waitFor } from '../helpers/processes';
import { BIN, restartConfigServer, scratchDir, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(240_000);

type Cfg = RunningServer & { configFile: string };
const suffix = randomBytes(4).toString('hex');
const tables = { data: `sr_seal_${suffix}`, lock: `sr_seal_lock_${suffix}` };

interface Storage {
  name: string;
  stanza: () => string;
  /** Every stored value, raw, for the plaintext checks. */
  storedBlobs: (s: Cfg) => Promise<Buffer[]>;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

const LEVEL: Storage = {
  name: 'level',
  stanza: () => 'storage "level" { path = "$DIR/data" }',
  storedBlobs: async (s) => filesUnder(join(dirname(s.configFile), 'data')).map((f) => readFileSync(f)),
};

async function pgQuery<T>(sql: string): Promise<T[]> {
  const c = new Client({ connectionString: postgresUrl() });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

const POSTGRES: Storage = {
  name: 'postgresql',
  stanza: () => `storage "postgresql" {
  connection_url = "${postgresUrl()}"
  table          = "${tables.data}"
  ha_table       = "${tables.lock}"
  ha_enabled     = true
}
api_addr = "http://127.0.0.1:$PORT"`,
  storedBlobs: async () => (await pgQuery<{ path: string; value: Buffer }>(`SELECT path, value FROM ${tables.data}`)).map((r) => Buffer.concat([Buffer.from(r.path), r.value])),
};

afterAll(async () => {
  await pgQuery(`DROP TABLE IF EXISTS ${tables.data}, ${tables.lock}`).catch(() => undefined);
});

const keyDir = scratchDir('sr-seal-keys-');
/** A fresh 32-byte key written as `form`, mode 0600; its raw bytes and its file. */
function newKey(form: 'raw' | 'hex' | 'base64'): { raw: Buffer; file: string } {
  const raw = randomBytes(32);
  const file = join(keyDir, `key-${randomBytes(4).toString('hex')}`);
  writeFileSync(file, form === 'raw' ? raw : `${raw.toString(form)}\n`, { mode: 0o600 });
  return { raw, file };
}

const staticStanza = (o: { id: string; file: string; prevId?: string; prevFile?: string; disabled?: boolean }) => `seal "static" {
  current_key_id = "${o.id}"
  current_key    = "file://${o.file}"
${o.prevId ? `  previous_key_id = "${o.prevId}"\n  previous_key    = "file://${o.prevFile}"\n` : ''}${o.disabled ? '  disabled = "true"\n' : ''}}`;

const listener = 'listener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }';

/** Rewrites a server's config file (as startConfigServer fills it in) for its next start. */
function rewrite(s: Cfg, storage: Storage, seal: string): void {
  const text = `${storage.stanza()}\n${listener}\n${seal}\n`;
  writeFileSync(s.configFile, text.replace(/\$PORT/g, String(s.port)).replace(/\$DIR/g, dirname(s.configFile)));
}

/** sys/seal-status once it answers (PostgreSQL storage answers 503 until it has connected). */
const status = (s: RunningServer) =>
  waitFor('seal status', async () => {
    const r = await s.api('GET', 'sys/seal-status', undefined, { token: null });
    return r.status === 200 ? r.body : undefined;
  }, 60_000);
/** Unsealed and serving: health answers `code` (200 active; 429 an HA standby; 503 would be sealed). */
const ready = (s: RunningServer, code = 200) => waitFor(`health ${code}`, async () => (await fetch(`${s.url}/v1/sys/health`)).status === code, 60_000);

/** kv/app once its plugin answers (a mount's plugin process starts in the background after unseal). */
const readApp = (s: RunningServer) =>
  waitFor('kv/app', async () => {
    const r = await s.api('GET', 'kv/app');
    return r.status === 200 ? r.body.data : undefined;
  }, 60_000);

async function restart(s: Cfg): Promise<Cfg> {
  await s.stop();
  const next = await restartConfigServer(s);
  next.rootToken = s.rootToken;
  return next;
}

/** The server on this config must exit non-zero; its output. */
async function startFails(configFile: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [BIN, 'server', `-config=${configFile}`, '-log-level=warn'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  return { code, out };
}

async function generateRoot(s: RunningServer, shares: string[]): Promise<{ status: number; token?: string; body: any }> {
  const started = (await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null })).body;
  let last: { status: number; body: any } = { status: 0, body: null };
  for (const key of shares) {
    last = await s.api('PUT', 'sys/generate-root/update', { key, nonce: started.nonce }, { token: null });
    if (last.status !== 200) return last;
  }
  if (!last.body.complete) return last;
  const raw = Buffer.from(last.body.encoded_token, 'base64');
  const otp = Buffer.from(started.otp as string);
  return { ...last, token: Buffer.from(raw.map((b, i) => b ^ otp[i]!)).toString() };
}

async function unsealWith(s: RunningServer, keys: string[], migrate = false): Promise<any> {
  let last: any;
  for (const key of keys) last = await s.api('POST', 'sys/unseal', { key, ...(migrate ? { migrate: true } : {}) }, { token: null });
  return last;
}

/** Neither the raw key nor its hex or base64 form appears in `blobs`. */
function noKeyIn(blobs: Buffer[], key: Buffer): void {
  const forms = [key, Buffer.from(key.toString('hex')), Buffer.from(key.toString('base64'))];
  expect(blobs.filter((b) => forms.some((f) => b.includes(f)))).toHaveLength(0);
}

describe.each([LEVEL, POSTGRES])('static seal on $name storage', (storage) => {
  let s: Cfg;
  let k1: { raw: Buffer; file: string };
  let recovery: string[] = [];
  const marker = `marker-${randomBytes(8).toString('hex')}`;

  afterAll(async () => {
    await s?.stop('SIGKILL');
    if (storage === POSTGRES) await pgQuery(`DROP TABLE IF EXISTS ${tables.data}, ${tables.lock}`).catch(() => undefined);
  });

  it('init answers recovery keys and leaves the server unsealed; seal-status says static and recovery_seal', async () => {
    k1 = newKey('raw');
    s = await startConfigServer(`${storage.stanza()}\n${listener}\n${staticStanza({ id: 'k1', file: k1.file })}\n`);
    expect(await status(s)).toMatchObject({ type: 'static', initialized: false, sealed: true, recovery_seal: true });
    // A static seal's init takes recovery_* (a 400 naming the field without them).
    const bad = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('recovery_shares');
    const init = await s.api('POST', 'sys/init', { recovery_shares: 3, recovery_threshold: 2 }, { token: null });
    await ready(s);
    expect(init.status).toBe(200);
    expect(init.body.keys).toEqual([]);
    expect(init.body.recovery_keys).toHaveLength(3);
    expect(init.body.recovery_keys_b64).toEqual(init.body.recovery_keys_base64);
    recovery = init.body.recovery_keys;
    s.rootToken = init.body.root_token;
    expect(await status(s)).toMatchObject({ type: 'static', initialized: true, sealed: false, t: 2, n: 3, recovery_seal: true, migration: false });
    expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    expect((await s.api('POST', 'kv/app', { password: marker })).status).toBe(204);
  });

  it('a restart unseals itself with the same data; sys/seal seals, the recovery keys unseal again', async () => {
    s = await restart(s);
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
    expect((await s.api('POST', 'sys/seal')).status).toBe(204);
    expect(await status(s)).toMatchObject({ sealed: true, type: 'static', t: 2, n: 3 });
    expect((await s.api('GET', 'kv/app')).status).toBe(503);
    expect((await unsealWith(s, recovery.slice(0, 2))).body).toMatchObject({ sealed: false });
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
  });

  it('generate-root takes the recovery keys (a forged share fails); sys/rekey is refused; the recovery keys rekey', async () => {
    const forged = Buffer.from(recovery[1]!, 'hex');
    forged[3] = forged[3]! ^ 0x55;
    expect((await generateRoot(s, [recovery[0]!, forged.toString('hex')])).status).toBe(400);
    const g = await generateRoot(s, [recovery[2]!, recovery[0]!]);
    expect(g.status).toBe(200);
    const self = await s.api('GET', 'auth/token/lookup-self', undefined, { token: g.token! });
    expect(self.body.data.policies).toEqual(['root']);

    const rk = await s.api('PUT', 'sys/rekey/init', { secret_shares: 3, secret_threshold: 2 }, { token: null });
    expect(rk.status).toBe(400);
    expect(rk.text).toContain('rekey-recovery-key');
    const init = await s.api('PUT', 'sys/rekey-recovery-key/init', { secret_shares: 4, secret_threshold: 3 }, { token: null });
    expect(init.body).toMatchObject({ started: true, required: 2, n: 4, t: 3 });
    await s.api('PUT', 'sys/rekey-recovery-key/update', { key: recovery[0], nonce: init.body.nonce }, { token: null });
    const done = await s.api('PUT', 'sys/rekey-recovery-key/update', { key: recovery[1], nonce: init.body.nonce }, { token: null });
    expect(done.body.complete).toBe(true);
    expect(done.body.keys).toHaveLength(4);
    // The old shares (all three: the new threshold) no longer combine to the recovery key.
    expect((await generateRoot(s, recovery)).status).toBe(400);
    recovery = done.body.keys;
    expect(await status(s)).toMatchObject({ t: 3, n: 4 });
    expect((await generateRoot(s, recovery.slice(1, 4))).token).toMatch(/^srs\./);
  });

  it('rotation: under current k2 with previous k1 it unseals and rewraps, after which k1 can go', async () => {
    const k2 = newKey('hex');
    rewrite(s, storage, staticStanza({ id: 'k2', file: k2.file, prevId: 'k1', prevFile: k1.file }));
    s = await restart(s);
    await ready(s);
    // Without the previous key: only a rewrap under k2 lets it unseal.
    rewrite(s, storage, staticStanza({ id: 'k2', file: k2.file }));
    k1 = k2;
    s = await restart(s);
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
  });

  it('a wrong key, an unknown key id, a missing file, a bad length or a missing variable stop the server naming the stanza', async () => {
    await s.stop();
    const wrong = newKey('base64');
    const cases: Array<[string, RegExp, Record<string, string>?]> = [
      [staticStanza({ id: 'k2', file: wrong.file }), /seal "static": current_key \(key id "k2"\) does not unwrap the stored key: wrong key/],
      [staticStanza({ id: 'k3', file: wrong.file }), /seal "static": the stored key is wrapped under key id "k2", which is neither current_key_id/],
      [staticStanza({ id: 'k2', file: join(keyDir, 'no-such-key') }), /seal "static": current_key: the key file ".*no-such-key" cannot be read \(ENOENT\)/],
      [staticStanza({ id: 'k2', file: (() => { const f = join(keyDir, 'short'); writeFileSync(f, randomBytes(16), { mode: 0o600 }); return f; })() }), /seal "static": current_key: the key must be 32 bytes/],
      ['seal "static" {\n  current_key_id = "k2"\n  current_key = "env://SR_TEST_NO_SUCH_VAR"\n}', /seal "static": current_key: the environment variable SR_TEST_NO_SUCH_VAR is not set/],
      ['', /seal "static": the storage is sealed by a static seal and the configuration has no seal "static" stanza/],
    ];
    for (const [seal, message] of cases) {
      rewrite(s, storage, seal);
      const r = await startFails(s.configFile);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.out).toMatch(message);
      expect(r.out).not.toMatch(/\n\s+at /); // no stack trace
      noKeyIn([Buffer.from(r.out)], wrong.raw);
    }
    // The key from a variable, base64: starts.
    rewrite(s, storage, 'seal "static" {\n  current_key_id = "k2"\n  current_key = "env://SR_TEST_SEAL_KEY"\n}');
    s = Object.assign(await restartConfigServer(s, { env: { SR_TEST_SEAL_KEY: k1.raw.toString('base64') } }), { rootToken: s.rootToken });
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
  });

  it('the seal key never reaches storage or the log; a loose key file is warned about', async () => {
    noKeyIn(await storage.storedBlobs(s), k1.raw);
    noKeyIn([Buffer.from(s.output())], k1.raw);
    chmodSync(k1.file, 0o644);
    rewrite(s, storage, staticStanza({ id: 'k2', file: k1.file }));
    s = await restart(s);
    await ready(s);
    // The log line is JSON: its quotes come escaped.
    expect(s.output()).toMatch(/seal \\"static\\": current_key: the key file \\".*\\" is readable by group or others \(mode 644\)/);
    noKeyIn([Buffer.from(s.output())], k1.raw);
    chmodSync(k1.file, 0o600);
  });

  if (storage === POSTGRES) {
    it('HA: a standby on the same storage and seal unseals itself (429 standby, not 503 sealed)', async () => {
      const standby = await startConfigServer(`${storage.stanza()}\n${listener}\n${staticStanza({ id: 'k2', file: k1.file })}\n`);
      try {
        await ready(standby, 429);
        expect((await status(standby)).sealed).toBe(false);
        // Forwarded to the active node.
        standby.rootToken = s.rootToken;
        expect((await readApp(standby))).toEqual({ password: marker });
      } finally {
        await standby.stop();
      }
    });
  }

  it('migrates static -> Shamir (stanza disabled, -migrate with the recovery keys) and back, keeping the data', async () => {
    rewrite(s, storage, staticStanza({ id: 'k2', file: k1.file, disabled: true }));
    s = await restart(s);
    expect(await status(s)).toMatchObject({ sealed: true, migration: true, type: 'static', t: 3, n: 4 });
    const noFlag = await s.api('POST', 'sys/unseal', { key: recovery[0] }, { token: null });
    expect(noFlag.status).toBe(400);
    expect(noFlag.text).toContain('migrat');
    expect((await unsealWith(s, recovery.slice(0, 3), true)).body).toMatchObject({ sealed: false, type: 'shamir', t: 3, n: 4, recovery_seal: false });
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });

    // Shamir now: the stanza can go; the old recovery keys are the unseal keys.
    rewrite(s, storage, '');
    s = await restart(s);
    expect(await status(s)).toMatchObject({ sealed: true, type: 'shamir', migration: false });
    expect((await unsealWith(s, [recovery[3]!, recovery[1]!, recovery[2]!])).body).toMatchObject({ sealed: false });
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
    // A snapshot taken under Shamir (LevelDB: snapshots are not restored on HA storage), restored after the move to static below.
    const snap = storage === LEVEL ? Buffer.from(await (await fetch(`${s.url}/v1/sys/storage/snapshot`, { headers: { 'X-Service-Token': s.rootToken } })).arrayBuffer()) : null;
    // -migrate when nothing is pending is refused.
    await s.api('POST', 'sys/seal');
    expect((await s.api('POST', 'sys/unseal', { key: recovery[0], migrate: true }, { token: null })).status).toBe(400);

    // Back to static: the stanza returns; -migrate with the unseal keys.
    rewrite(s, storage, staticStanza({ id: 'k2', file: k1.file }));
    s = await restart(s);
    expect(await status(s)).toMatchObject({ sealed: true, migration: true, type: 'shamir', t: 3, n: 4 });
    expect((await unsealWith(s, recovery.slice(1, 4), true)).body).toMatchObject({ sealed: false, type: 'static', recovery_seal: true, t: 3, n: 4 });
    s = await restart(s);
    await ready(s);
    expect((await readApp(s))).toEqual({ password: marker });
    // The old unseal keys are the recovery keys now.
    expect((await generateRoot(s, recovery.slice(0, 3))).token).toMatch(/^srs\./);
    if (snap) {
      // Restored, the data is the snapshot's and the seal stays today's: static, the same recovery keys, auto-unseal at the next start.
      expect((await s.api('POST', 'kv/after', { v: 1 })).status).toBe(204);
      const r = await fetch(`${s.url}/v1/sys/storage/snapshot-restore`, { method: 'POST', headers: { 'X-Service-Token': s.rootToken }, body: snap });
      expect(r.status).toBeLessThan(300);
      await waitFor('the restored state', async () => (await s.api('GET', 'kv/after')).status === 404, 60_000);
      expect((await readApp(s))).toEqual({ password: marker });
      s = await restart(s);
      await ready(s);
      expect(await status(s)).toMatchObject({ type: 'static', sealed: false, t: 3, n: 4 });
      expect((await generateRoot(s, recovery.slice(1, 4))).token).toMatch(/^srs\./);
    }
    noKeyIn(await storage.storedBlobs(s), k1.raw);
  });
});
