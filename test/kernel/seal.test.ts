/**
 * The seal end to end on a production config (level storage): init with
 * Shamir shares, sealed behaviour, unseal progress and reset, no secret or
 * token on disk in plain text, key rotation, and unseal after a restart.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { restartConfigServer, startConfigServer, type RunningServer } from '../helpers/server';

// The e2e project's testTimeout is not applied per project by jest 30; these tests start real processes.
jest.setTimeout(60_000);

const CONFIG = `storage "level" { path = "$DIR/data" }
listener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }
`;

type Cfg = RunningServer & { configFile: string };
let s: Cfg;
let keys: string[] = [];
let keysB64: string[] = [];
let root = '';
let token = '';
const marker = `marker-${randomBytes(12).toString('hex')}`;

afterAll(async () => {
  await s.stop('SIGKILL');
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Files under `dir` whose raw bytes contain `needle` as UTF-8, UTF-16LE or hex. */
function filesContaining(dir: string, needle: string): string[] {
  const forms = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le'), Buffer.from(Buffer.from(needle).toString('hex'))];
  return filesUnder(dir).filter((f) => {
    const b = readFileSync(f);
    return forms.some((n) => b.includes(n));
  });
}

async function unsealWith(srv: RunningServer, ks: string[]): Promise<void> {
  let last: any;
  for (const key of ks) last = (await srv.api('POST', 'sys/unseal', { key }, { token: null })).body;
  expect(last.sealed).toBe(false);
}

describe('seal', () => {
  beforeAll(async () => {
    s = await startConfigServer(CONFIG);
  });

  it('reports an uninitialized server with 501 on health', async () => {
    const h = await s.api('GET', 'sys/health', undefined, { token: null });
    expect(h.status).toBe(501);
    expect(h.body).toMatchObject({ initialized: false, sealed: true });
    expect((await s.api('GET', 'sys/init', undefined, { token: null })).body).toEqual({ initialized: false });
  });

  it('describes the sealed-state paths with ?help=1 while sealed (they are declared sys paths)', async () => {
    for (const path of ['sys/health', 'sys/seal-status', 'sys/init', 'sys/unseal']) {
      const h = await s.api('GET', `${path}?help=1`, undefined, { token: null });
      expect(h.status).toBe(200);
      expect(h.body.help).toContain(`Matching Route: ${path.slice('sys/'.length)}`);
      expect(Object.keys(h.body.openapi.paths)).toEqual(['/']);
    }
    // Only the methods a path declares: the rest stay 405, sealed or not.
    expect((await s.api('DELETE', 'sys/seal-status', undefined, { token: null })).status).toBe(405);
    expect((await s.api('GET', 'sys/unseal', undefined, { token: null })).status).toBe(405);
  });

  it('initializes with 5 shares and threshold 3', async () => {
    const r = await s.api('POST', 'sys/init', { secret_shares: 5, secret_threshold: 3 }, { token: null });
    expect(r.status).toBe(200);
    keys = r.body.keys;
    keysB64 = r.body.keys_base64;
    root = r.body.root_token;
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(5);
    expect(keysB64).toHaveLength(5);
    keys.forEach((k, i) => expect(Buffer.from(k, 'hex').toString('base64')).toBe(keysB64[i]));
    expect(typeof root).toBe('string');
    expect(root.length).toBeGreaterThan(10);
    expect((await s.api('POST', 'sys/init', { secret_shares: 5, secret_threshold: 3 }, { token: null })).status).toBe(400);
  });

  it('refuses everything but the seal paths while sealed', async () => {
    expect((await s.api('GET', 'secret/data/x', undefined, { token: root })).status).toBe(503);
    expect((await s.api('GET', 'sys/mounts', undefined, { token: root })).status).toBe(503);
    const h = await s.api('GET', 'sys/health', undefined, { token: null });
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ initialized: true, sealed: true });
    const st = await s.api('GET', 'sys/seal-status', undefined, { token: null });
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ sealed: true, initialized: true, t: 3, n: 5, progress: 0 });
  });

  it('counts unseal progress, resets it, and unseals with 3 different keys', async () => {
    const p1 = await s.api('POST', 'sys/unseal', { key: keys[0] }, { token: null });
    expect(p1.body).toMatchObject({ sealed: true, progress: 1, t: 3, n: 5 });
    const reset = await s.api('POST', 'sys/unseal', { reset: true }, { token: null });
    expect(reset.body).toMatchObject({ sealed: true, progress: 0 });
    expect((await s.api('POST', 'sys/unseal', { key: keys[1] }, { token: null })).body).toMatchObject({ sealed: true, progress: 1 });
    // base64 shares are accepted too.
    expect((await s.api('POST', 'sys/unseal', { key: keysB64[3] }, { token: null })).body).toMatchObject({ sealed: true, progress: 2 });
    const done = await s.api('POST', 'sys/unseal', { key: keys[4] }, { token: null });
    expect(done.body).toMatchObject({ sealed: false, progress: 0 });
    expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
    expect((await s.api('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
  });

  it('keeps secrets and tokens off the disk in plain text once sealed', async () => {
    expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '1' } }, { token: root })).status).toBe(204);
    expect((await s.api('POST', 'kv/app', { password: marker }, { token: root })).status).toBe(204);
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).body.data).toEqual({ password: marker });
    const t = await s.api('POST', 'auth/token/create', { policies: ['default'] }, { token: root });
    token = t.body.auth.client_token;
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token })).status).toBe(200);

    expect((await s.api('POST', 'sys/seal', undefined, { token: root })).status).toBe(204);
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).status).toBe(503);

    // Guard against a vacuous pass: storage must actually have been written.
    expect(filesUnder(join(s.dataDir, 'data')).length).toBeGreaterThan(0);
    expect(filesContaining(s.dataDir, marker)).toEqual([]);
    expect(filesContaining(s.dataDir, root)).toEqual([]);
    expect(filesContaining(s.dataDir, token)).toEqual([]);
    for (const k of keys) expect(filesContaining(s.dataDir, k)).toEqual([]);
  });

  it('still reads old data after sys/rotate', async () => {
    await unsealWith(s, [keys[0]!, keys[1]!, keys[2]!]);
    const before = await s.api('GET', 'sys/key-status', undefined, { token: root });
    expect((await s.api('POST', 'sys/rotate', undefined, { token: root })).status).toBe(204);
    const after = await s.api('GET', 'sys/key-status', undefined, { token: root });
    expect(before.status).toBe(200);
    expect(after.body.data.term).toBe(before.body.data.term + 1);
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).body.data).toEqual({ password: marker });
    expect((await s.api('POST', 'kv/after-rotate', { v: 'new' }, { token: root })).status).toBe(204);
    // A seal/unseal cycle must still open both the old and the new term.
    expect((await s.api('POST', 'sys/seal', undefined, { token: root })).status).toBe(204);
    await unsealWith(s, [keys[2]!, keys[3]!, keys[4]!]);
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).body.data).toEqual({ password: marker });
    expect((await s.api('GET', 'kv/after-rotate', undefined, { token: root })).body.data).toEqual({ v: 'new' });
  });

  it('comes back sealed after a restart and unseals to the same data', async () => {
    await s.stop('SIGTERM');
    s = await restartConfigServer(s);
    const st = await s.api('GET', 'sys/seal-status', undefined, { token: null });
    expect(st.body).toMatchObject({ sealed: true, initialized: true, t: 3, n: 5, progress: 0 });
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).status).toBe(503);
    await unsealWith(s, [keys[4]!, keys[0]!, keys[3]!]);
    expect((await s.api('GET', 'kv/app', undefined, { token: root })).body.data).toEqual({ password: marker });
    expect((await s.api('GET', 'kv/after-rotate', undefined, { token: root })).body.data).toEqual({ v: 'new' });
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token })).status).toBe(200);
  });
});
